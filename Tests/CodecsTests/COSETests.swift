import ByteCore
import Codecs
import Crypto
import XCTest

final class COSESign1Tests: XCTestCase {
    /// A fixed issuer key so the encodings are stable.
    let issuer = try! Primitives.signingPrivateKey(raw: Hex.decode("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")!)

    func testSignVerifyRoundTrip() throws {
        let payload = CBOR.embedded(["1": "1.0"]).encoded()
        let issuerPoint = Primitives.point(of: issuer)
        let kid = CoseSign1.keyIdentifier(issuerPublicKey: issuerPoint)
        let signed = CoseSign1.sign(payload: payload, key: issuer, kid: kid)
        XCTAssertEqual(signed.protectedBytes.hex, "a10126")
        XCTAssertEqual(signed.signature.count, 64)
        let bytes = signed.encoded()
        let back = try CoseSign1(parsing: bytes)
        XCTAssertEqual(back, signed)
        XCTAssertEqual(back.kid, kid)
        XCTAssertNoThrow(try back.verify(publicKey: issuerPoint))
        // Tag 18 form is accepted too.
        XCTAssertEqual(try CoseSign1(cbor: .tagged(18, signed.cbor)), signed)
    }

    func testSigStructureIsRFC9052Shape() {
        let tbs = CoseSign1.toBeSigned(protected: [0xA1, 0x01, 0x26], payload: [0x01])
        XCTAssertEqual(tbs.hex, "846a5369676e61747572653143a101264041" + "01")
    }

    func testKeyIdentifierIsSHA256OfLabelAndKey() {
        let point = Primitives.point(of: issuer)
        let expected = Array(SHA256.hash(data: Array("key-identifier".utf8) + point).prefix(8))
        XCTAssertEqual(CoseSign1.keyIdentifier(issuerPublicKey: point), expected)
    }

    func testTamperingIsRejected() throws {
        let point = Primitives.point(of: issuer)
        var signed = CoseSign1.sign(payload: [1, 2, 3], key: issuer, kid: nil)
        signed.payload = [1, 2, 4]
        XCTAssertThrowsCose(.badSignature, try signed.verify(publicKey: point))
        let other = P256.Signing.PrivateKey()
        let good = CoseSign1.sign(payload: [1, 2, 3], key: issuer, kid: nil)
        XCTAssertThrowsCose(.badSignature, try good.verify(publicKey: Primitives.point(of: other)))
        var alg = good
        alg.protectedBytes = CBOR.map([1: -35]).encoded()
        XCTAssertThrowsCose(.unsupportedAlgorithm, try alg.verify(publicKey: point))
        alg.protectedBytes = CBOR.map([4: .bytes([1])]).encoded()
        XCTAssertThrowsCose(.missingAlgorithm, try alg.verify(publicKey: point))
        alg.protectedBytes = CBOR.map([1: -7, 2: [99]]).encoded()
        XCTAssertThrowsCose(.unknownCriticalHeader, try alg.verify(publicKey: point))
        var sig = good
        sig.signature = Array(sig.signature.prefix(63))
        XCTAssertThrowsCose(.badSignature, try sig.verify(publicKey: point))
    }

    func testMalformedStructures() {
        XCTAssertThrowsCose(.malformed, try CoseSign1(parsing: [0x01]))
        XCTAssertThrowsCose(.malformed, try CoseSign1(parsing: CBOR.array([.bytes([]), [:], .bytes([])]).encoded()))
        XCTAssertThrowsCose(.malformed, try CoseSign1(parsing: CBOR.array(["x", [:], .bytes([]), .bytes([])]).encoded()))
        XCTAssertThrowsCose(.detachedPayload, try CoseSign1(parsing: CBOR.array([.bytes([]), [:], nil, .bytes([])]).encoded()))
        XCTAssertThrowsCose(.malformed, try CoseSign1(parsing: [0x84, 0x40, 0xA0, 0x40]))
        do {
            _ = try CoseSign1(parsing: [0x84, 0x40])
        } catch {
            XCTAssertEqual(error.cbor?.code, .truncated)
        }
    }
}

final class COSEKeyTests: XCTestCase {
    func testRoundTripAndLabels() throws {
        let key = P256.Signing.PrivateKey()
        let point = Primitives.point(of: key)
        let ck = try CoseKey(publicKey: point)
        let bytes = ck.encoded()
        // {1: 2, -1: 1, -2: x, -3: y} in deterministic order: 1, -1, -2, -3.
        XCTAssertEqual(Array(bytes.prefix(5)).hex, "a401022001")
        XCTAssertEqual(try CoseKey(parsing: bytes), ck)
    }

    func testRejectsOtherKeys() {
        let x = CBOR.bytes([UInt8](repeating: 1, count: 32))
        XCTAssertThrowsCose(.invalidKey, try CoseKey(cbor: [1: 1, -1: 6, -2: x]))
        XCTAssertThrowsCose(.invalidKey, try CoseKey(cbor: [1: 2, -1: 2, -2: x, -3: x]))
        XCTAssertThrowsCose(.invalidKey, try CoseKey(cbor: [1: 2, -1: 1, -2: x, -3: x])) // not on the curve
        XCTAssertThrowsCose(.invalidKey, try CoseKey(cbor: [1: 2, -1: 1, -2: x, -3: .bytes([1])]))
        XCTAssertThrowsCose(.invalidKey, try CoseKey(cbor: "x"))
        XCTAssertThrowsCose(.malformed, try CoseKey(parsing: [0xA1]))
    }
}

func XCTAssertThrowsCose<T>(_ code: CoseError.Code, _ expression: @autoclosure () throws -> T,
                            file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try expression()
        XCTFail("expected \(code.rawValue), got a value", file: file, line: line)
    } catch let error as CoseError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    } catch {
        XCTFail("expected CoseError \(code.rawValue), got \(error)", file: file, line: line)
    }
}
