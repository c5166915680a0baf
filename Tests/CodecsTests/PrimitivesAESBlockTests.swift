import ByteCore
import Codecs
import XCTest

/// `Primitives.aes128Block`, the BLE advertisement's rotating-tag cipher.
final class PrimitivesAESBlockTests: XCTestCase {
    /// FIPS-197 Appendix C.1 (AES-128).
    func testFIPS197VectorC1() throws {
        let key = Hex.decode("000102030405060708090a0b0c0d0e0f")!
        let block = Hex.decode("00112233445566778899aabbccddeeff")!
        XCTAssertEqual(Hex.encode(try Primitives.aes128Block(key: key, block: block)), "69c4e0d86a7b0430d8cdb78070b4c55a")
    }

    func testWrongLengthsAreRefused() {
        XCTAssertThrowsError(try Primitives.aes128Block(key: [UInt8](repeating: 0, count: 32), block: [UInt8](repeating: 0, count: 16))) {
            XCTAssertEqual(($0 as? PrimitiveError)?.code, .unsupportedParameter)
        }
        XCTAssertThrowsError(try Primitives.aes128Block(key: [UInt8](repeating: 0, count: 16), block: [UInt8](repeating: 0, count: 15))) {
            XCTAssertEqual(($0 as? PrimitiveError)?.code, .unsupportedParameter)
        }
    }
}
