import ByteCore
import Codecs
import XCTest
@testable import AccessProtocol

final class CredentialSessionTests: XCTestCase {
    private func select(_ c: CredentialSession) throws -> ResponseAPDU {
        try ResponseAPDU(parsing: c.respond(to: Commands.select(AID.expedited).bytes))
    }

    func testSelectAnswersTheFCI() throws {
        let c = Fixture.credential(versions: [0x0100, 0x0009])
        let r = try select(c)
        XCTAssertEqual(r.status, .success)
        let fci = try SelectResponse(parsing: r.data)
        XCTAssertEqual(fci.aid, AID.expedited)
        XCTAssertEqual(fci.versions, [0x0100, 0x0009])
        XCTAssertEqual(fci.maxCommand, 255)
        XCTAssertEqual(fci.maxResponse, 256)
        XCTAssertEqual(r.data.hex, "6f228409a000000909acce5501a515800200005c0401000009" + "7f66080202" + "00ff" + "0202" + "0100")
    }

    func testStrictLe() throws {
        let c = Fixture.credential()
        _ = try select(c)
        var auth0 = Auth0Command(flags: 0, policy: 1, version: 0x0100, readerEphemeralKey: Fixture.readerKey.publicBytes,
                                 transactionID: [UInt8](repeating: 1, count: 16), readerID: Fixture.groupID + Fixture.subID).apdu
        auth0.le = nil
        XCTAssertEqual(c.respond(to: auth0.bytes), [0x67, 0x01])
        var cf = ControlFlow(s2: 0).apdu
        cf.le = 256
        XCTAssertEqual(c.respond(to: cf.bytes), [0x67, 0x01])
        cf.le = nil
        XCTAssertEqual(c.respond(to: cf.bytes), [0x90, 0x00])
    }

    func testDispatchErrors() throws {
        let c = Fixture.credential()
        XCTAssertEqual(c.respond(to: [0x80, 0x55, 0x00, 0x00, 0x00]), [0x6D, 0x00])
        XCTAssertEqual(c.respond(to: [0x80, 0xA4, 0x04, 0x00, 0x01, 0x01, 0x00]), [0x6E, 0x00])
        XCTAssertEqual(c.respond(to: [0x00]), [0x67, 0x00])
        XCTAssertEqual(c.respond(to: Commands.select([0xA0, 0x00]).bytes), [0x6A, 0x82])
        // AUTH1 before AUTH0.
        _ = try select(c)
        XCTAssertEqual(c.respond(to: Auth1Command(flags: 1, signature: [UInt8](repeating: 0, count: 64)).apdu.bytes), [0x69, 0x85])
        // GET RESPONSE with nothing pending.
        XCTAssertEqual(c.respond(to: [0x00, 0xC0, 0x00, 0x00, 0x00]), [0x69, 0x85])
        // Step-up before authentication.
        XCTAssertEqual(c.respond(to: Commands.select(AID.stepUp).bytes), [0x69, 0x85])
    }

    func testAuth0WithoutFastHasNoCryptogramAndUnknownReaderGetsADecoy() throws {
        let c = Fixture.credential()
        _ = try select(c)
        var cmd = Auth0Command(flags: 0, policy: 1, version: 0x0100, readerEphemeralKey: Fixture.readerKey.publicBytes,
                               transactionID: [UInt8](repeating: 1, count: 16), readerID: Fixture.groupID + Fixture.subID)
        var r = try ResponseAPDU(parsing: c.respond(to: cmd.apdu.bytes))
        XCTAssertNil(try Auth0Response(parsing: r.data).cryptogram)
        _ = try select(c)
        cmd.flags = Auth0Command.flagFast
        r = try ResponseAPDU(parsing: c.respond(to: cmd.apdu.bytes))
        XCTAssertEqual(try Auth0Response(parsing: r.data).cryptogram?.count, 64)
        // A version the credential does not speak.
        _ = try select(c)
        cmd.version = 0x0200
        XCTAssertEqual(c.respond(to: cmd.apdu.bytes), [0x6A, 0x88])
    }
}
