import ByteCore
import Codecs
import Crypto
import XCTest

/// `Primitives.hkdf` (written out over SHA-256) against swift-crypto's `HKDF` and RFC 5869; the
/// Wycheproof vectors run through it in `WycheproofHKDFTests`.
final class PrimitivesHKDFTests: XCTestCase {
    func testMatchesSwiftCrypto() throws {
        for _ in 0..<300 {
            let ikm = Primitives.randomBytes(Int.random(in: 0...80))
            let salt = Primitives.randomBytes([0, 1, 32, 64, 65, 200, 300].randomElement()!)
            let info = Primitives.randomBytes(Int.random(in: 0...80))
            let n = [1, 31, 32, 33, 64, 160, 255, 1000, 8160].randomElement()!
            let reference = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info,
                                                   outputByteCount: n).withUnsafeBytes { Array($0) }
            XCTAssertEqual(try Primitives.hkdf(ikm: ikm, salt: salt, info: info, length: n), reference)
        }
    }

    /// swift-crypto's HKDF traps on an output length of 0; ours returns no bytes.
    func testZeroLengthIsEmpty() throws {
        XCTAssertEqual(try Primitives.hkdf(ikm: [1, 2, 3], salt: [], info: [], length: 0), [])
    }

    func testRefusesLengthsOutOfRange() {
        for n in [-1, 255 * 32 + 1] {
            XCTAssertThrowsError(try Primitives.hkdf(ikm: [1], salt: [], info: [], length: n)) { error in
                XCTAssertEqual((error as? PrimitiveError)?.code, .unsupportedParameter)
            }
        }
    }

    /// RFC 5869 A.1–A.3 (A.3: empty salt and info).
    func testRFC5869() throws {
        let cases: [(ikm: String, salt: String, info: String, length: Int, okm: String)] = [
            ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9", 42,
             "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
            ((0x00...0x4f).map { String(format: "%02x", $0) }.joined(), (0x60...0xaf).map { String(format: "%02x", $0) }.joined(),
             (0xb0...0xff).map { String(format: "%02x", $0) }.joined(), 82,
             "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
            ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "", 42,
             "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
        ]
        for c in cases {
            XCTAssertEqual(try Primitives.hkdf(ikm: Hex.decode(c.ikm)!, salt: Hex.decode(c.salt)!, info: Hex.decode(c.info)!,
                                               length: c.length).hex, c.okm)
        }
    }
}
