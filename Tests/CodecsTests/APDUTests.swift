import ByteCore
import Codecs
import XCTest

final class APDUTests: XCTestCase {
    func testFourCasesRoundTrip() throws {
        let cases: [CommandAPDU] = [
            CommandAPDU(cla: 0x80, ins: 0x3C),
            CommandAPDU(cla: 0x00, ins: 0xC0, le: 256),
            CommandAPDU(cla: 0x00, ins: 0xC0, le: 17),
            CommandAPDU(cla: 0x80, ins: 0x3C, data: [0x41, 0x01, 0x00]),
            CommandAPDU(cla: 0x00, ins: 0xA4, p1: 4, data: [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01], le: 256),
            CommandAPDU(cla: 0x80, ins: 0x80, data: [UInt8](repeating: 7, count: 255), le: 256),
        ]
        for c in cases {
            XCTAssertEqual(try CommandAPDU(parsing: c.encoded()), c)
        }
        XCTAssertEqual(Commands_select.hex, "00a4040009a000000909acce550100")
        XCTAssertEqual(try CommandAPDU(parsing: Commands_select).le, 256)
    }

    private var Commands_select: [UInt8] {
        CommandAPDU(cla: 0x00, ins: 0xA4, p1: 4, data: [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01], le: 256).bytes
    }

    func testCommandErrors() {
        func code(_ b: [UInt8]) -> APDUError.Code? {
            do { _ = try CommandAPDU(parsing: b); return nil } catch { return error.code }
        }
        XCTAssertEqual(code([0x00, 0xA4, 0x04]), .truncated)
        XCTAssertEqual(code([0x00, 0xA4, 0x04, 0x00, 0x00, 0x01]), .extendedLength)
        XCTAssertEqual(code([0x80, 0xC9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]), .extendedLength)
        XCTAssertEqual(code([0x80, 0xC9, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x02]), .badLength)
        XCTAssertEqual(code([0x80, 0xC9, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00]), .badLength)
        XCTAssertEqual(code([0x00, 0xA4, 0x04, 0x00, 0x03, 0x01]), .badLength)
        XCTAssertEqual(code([0x00, 0xA4, 0x04, 0x00, 0x01, 0x01, 0x00, 0x00]), .badLength)
        XCTAssertThrowsError(try CommandAPDU(cla: 0, ins: 0, data: [UInt8](repeating: 0, count: 256)).encoded()) {
            XCTAssertEqual(($0 as? APDUError)?.code, .tooLong)
        }
    }

    /// ISO/IEC 7816-4 extended forms, as NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH sends them.
    func testExtendedLengthForms() throws {
        // Case 2E: the official GET RESPONSE with Le 275.
        let get = try CommandAPDU(parsing: [0x00, 0xC0, 0x00, 0x00, 0x00, 0x01, 0x13])
        XCTAssertEqual(get, CommandAPDU(cla: 0x00, ins: 0xC0, le: 275, extendedLength: true))
        XCTAssertEqual(try get.encoded(), [0x00, 0xC0, 0x00, 0x00, 0x00, 0x01, 0x13])
        XCTAssertEqual(try CommandAPDU(parsing: [0x00, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00]).le, 65_536)
        // Case 3E and 4E: Lc 00 01 2C, 300 data bytes, Le 00 00.
        let data = [UInt8](repeating: 0x5A, count: 300)
        let three = try CommandAPDU(parsing: [0x80, 0xC9, 0x00, 0x00, 0x00, 0x01, 0x2C] + data)
        XCTAssertEqual(three.data, data)
        XCTAssertNil(three.le)
        let four = try CommandAPDU(parsing: [0x80, 0xC9, 0x00, 0x00, 0x00, 0x01, 0x2C] + data + [0x00, 0x00])
        XCTAssertEqual(four.le, 65_536)
        XCTAssertTrue(four.extendedLength)
        XCTAssertEqual(try CommandAPDU(parsing: four.encoded()), four)
        XCTAssertEqual(try four.encoded().count, 4 + 3 + 300 + 2)
        // Chained, an extended command stays extended part by part and reassembles whole (the fuzzer's property).
        let parts = CommandChainer.split(four, chunk: 100)
        XCTAssertEqual(parts.count, 3)
        XCTAssertTrue(parts.allSatisfy { $0.extendedLength })
        XCTAssertEqual(try parts[0].encoded().prefix(7), [0x90, 0xC9, 0x00, 0x00, 0x00, 0x00, 0x64])
        var assembler = CommandAssembler()
        var whole: CommandAPDU?
        for part in parts { if case .complete(let c) = try assembler.feed(CommandAPDU(parsing: part.encoded())) { whole = c } }
        XCTAssertEqual(whole, four)
        // Short form still refuses an Le above 256; extended refuses one above 65 536.
        XCTAssertThrowsError(try CommandAPDU(cla: 0, ins: 0xC0, le: 275).encoded()) { XCTAssertEqual(($0 as? APDUError)?.code, .tooLong) }
        XCTAssertThrowsError(try CommandAPDU(cla: 0, ins: 0xC0, le: 65_537, extendedLength: true).encoded()) { XCTAssertEqual(($0 as? APDUError)?.code, .tooLong) }
    }

    func testResponseRoundTripAndStatusWords() throws {
        let r = ResponseAPDU(data: [1, 2, 3], status: .success)
        XCTAssertEqual(r.bytes, [1, 2, 3, 0x90, 0x00])
        XCTAssertEqual(try ResponseAPDU(parsing: r.bytes), r)
        XCTAssertEqual(try ResponseAPDU(parsing: [0x6A, 0x82]).status, .fileNotFound)
        XCTAssertEqual(StatusWord.bytesRemaining(256).bytes, [0x61, 0x00])
        XCTAssertEqual(StatusWord.bytesRemaining(20).bytes, [0x61, 0x14])
        XCTAssertEqual(StatusWord.wrongLengthLe.description, "6701")
        XCTAssertThrowsError(try ResponseAPDU(parsing: [0x90])) { XCTAssertEqual(($0 as? APDUError)?.code, .truncated) }
        XCTAssertThrowsError(try ResponseAPDU(parsing: [UInt8](repeating: 0, count: 259))) {
            XCTAssertEqual(($0 as? APDUError)?.code, .tooLong)
        }
    }

    func testCommandChainingSplitsWithin262BytesAndReassembles() throws {
        let long = CommandAPDU(cla: 0x00, ins: 0xC3, data: (0..<700).map { UInt8($0 & 0xFF) }, le: 256)
        let parts = CommandChainer.split(long)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(parts.map { $0.cla }, [0x10, 0x10, 0x00])
        XCTAssertEqual(parts.map { $0.le }, [nil, nil, 256])
        for p in parts { XCTAssertLessThanOrEqual(p.bytes.count, 262) }
        var assembler = CommandAssembler()
        var result: CommandAPDU?
        for p in parts {
            switch try assembler.feed(CommandAPDU(parsing: p.bytes)) {
            case .needMore: XCTAssertNil(result)
            case .complete(let c): result = c
            }
        }
        XCTAssertEqual(result, long)
        // A proprietary class keeps its other bits: 80 → 90 while chaining.
        XCTAssertEqual(CommandChainer.split(CommandAPDU(cla: 0x80, ins: 0x81, data: [UInt8](repeating: 1, count: 300))).map(\.cla), [0x90, 0x80])
        XCTAssertEqual(CommandChainer.split(CommandAPDU(cla: 0x80, ins: 0x81, data: [1])).count, 1)
    }

    func testCommandAssemblerRejectsHeaderChangeAndOverlongChains() throws {
        var a = CommandAssembler()
        _ = try a.feed(CommandAPDU(cla: 0x10, ins: 0xC3, data: [1]))
        XCTAssertThrowsError(try a.feed(CommandAPDU(cla: 0x00, ins: 0xC9, data: [2]))) {
            XCTAssertEqual(($0 as? APDUError)?.code, .chainMismatch)
        }
        XCTAssertFalse(a.isCollecting)
        var small = CommandAssembler(limit: 4)
        _ = try small.feed(CommandAPDU(cla: 0x10, ins: 0xC3, data: [1, 2, 3]))
        XCTAssertThrowsError(try small.feed(CommandAPDU(cla: 0x10, ins: 0xC3, data: [4, 5]))) {
            XCTAssertEqual(($0 as? APDUError)?.code, .chainTooLong)
        }
    }

    /// Response chaining fed in every chunk size, including one byte per GET RESPONSE.
    func testResponseChainingRoundTripsAtEveryChunkSize() throws {
        let payload = (0..<600).map { UInt8(($0 * 7) & 0xFF) }
        for chunk in [1, 2, 17, 255, 256] {
            var chainer = ResponseChainer(chunk: chunk)
            var assembler = ResponseAssembler()
            var response = chainer.start(payload, status: .success)
            var rounds = 0
            loop: while true {
                XCTAssertLessThanOrEqual(response.bytes.count, 263)
                switch try assembler.feed(ResponseAPDU(parsing: response.bytes)) {
                case .send(let getResponse):
                    XCTAssertEqual(getResponse.ins, 0xC0)
                    response = chainer.next(le: getResponse.le ?? 256)
                case .complete(let whole):
                    XCTAssertEqual(whole.data, payload)
                    XCTAssertEqual(whole.status, .success)
                    break loop
                }
                rounds += 1
                XCTAssertLessThan(rounds, 1000)
            }
            XCTAssertFalse(chainer.hasPending)
        }
    }

    func testShortResponseIsNotChained() throws {
        var chainer = ResponseChainer()
        let r = chainer.start([1, 2, 3], status: .success)
        XCTAssertEqual(r.bytes, [1, 2, 3, 0x90, 0x00])
        XCTAssertEqual(chainer.start([UInt8](repeating: 0, count: 256)).status, .success)
        XCTAssertEqual(chainer.start([UInt8](repeating: 0, count: 257)).status, .bytesRemaining(1))
    }

    func testRandomCommandsRoundTrip() throws {
        for _ in 0..<500 {
            let n = Int.random(in: 0...255)
            let c = CommandAPDU(cla: .random(in: 0...255), ins: .random(in: 0...255), p1: .random(in: 0...255),
                                p2: .random(in: 0...255), data: (0..<n).map { _ in .random(in: 0...255) },
                                le: Bool.random() ? nil : Int.random(in: 1...256))
            XCTAssertEqual(try CommandAPDU(parsing: c.encoded()), c)
        }
    }
}
