import BLE
import ByteCore
import Foundation
import XCTest

/// The btsnoop reader behind `lockbench trace`: APDUs out of LE credit-based channels, written by
/// LockBench's own btsnoop writer; fragmented ACL and multi-frame SDUs; hostile files refused.
final class BTSnoopReaderTests: XCTestCase {
    /// ACL packets carrying `frame` (an L2CAP frame) on `handle`, split into `size`-byte fragments.
    func acl(_ frame: L2CAPFrame, handle: UInt16 = 0x0040, size: Int = 1000) -> [H4Packet] {
        ACLPacket.fragments(of: frame.encoded(), handle: handle, maxLength: size).map { H4Packet(.acl, $0.encoded()) }
    }

    /// LE credit-based connection request (phone, CID 0x0041) and response (lock, CID 0x0042).
    var channelSetup: [(H4Packet, Bool)] {
        let request = L2CAPFrame(cid: 0x0005, payload: [0x14, 0x01, 0x0A, 0x00, 0x80, 0x00, 0x41, 0x00, 0xF7, 0x00, 0xF7, 0x00, 0x0A, 0x00])
        let response = L2CAPFrame(cid: 0x0005, payload: [0x15, 0x01, 0x0A, 0x00, 0x42, 0x00, 0xF7, 0x00, 0xF7, 0x00, 0x0A, 0x00, 0x00, 0x00])
        return acl(request).map { ($0, true) } + acl(response).map { ($0, false) }
    }

    /// K-frames of one SDU (the first carries the 2-byte SDU length), at most `mps` bytes each.
    func kFrames(_ sdu: [UInt8], cid: UInt16, mps: Int) -> [L2CAPFrame] {
        let whole = [UInt8(sdu.count & 0xFF), UInt8(sdu.count >> 8)] + sdu
        return stride(from: 0, to: whole.count, by: mps).map { L2CAPFrame(cid: cid, payload: Array(whole[$0..<min(whole.count, $0 + mps)])) }
    }

    func capture(_ packets: [(H4Packet, Bool)]) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("btsnoop-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        for (p, received) in packets { writer.write(p, received: received) }
        writer.flush()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func testAPDUsComeOutOfFragmentedKFramesInOrder() throws {
        let command = AliroFrame.command([0x00, 0xA4, 0x04, 0x00, 0x09] + AliroFrameTestAID.aid + [0x00]).encoded()
        let answer = AliroFrame.response([UInt8](repeating: 0x5A, count: 300) + [0x90, 0x00]).encoded()
        var packets = channelSetup
        // The lock sends the command to the phone's CID (0x0041), in K-frames of 23, ACL fragments of 27.
        for f in kFrames(command, cid: 0x0041, mps: 23) { packets += acl(f, size: 27).map { ($0, false) } }
        // Something on another channel (ATT) in between is ignored.
        packets += acl(L2CAPFrame(cid: 0x0004, payload: [0x0A, 0x03, 0x00])).map { ($0, true) }
        for f in kFrames(answer, cid: 0x0042, mps: 100) { packets += acl(f, size: 27).map { ($0, true) } }
        let parsed = try BTSnoopCapture(parsing: try capture(packets))
        let apdus = parsed.accessAPDUs()
        XCTAssertEqual(apdus.count, 2)
        XCTAssertEqual(apdus[0].isCommand, true)
        XCTAssertEqual(apdus[0].bytes, Array(command.dropFirst(4)))
        XCTAssertEqual(apdus[1].isCommand, false)
        XCTAssertEqual(apdus[1].bytes.count, 302)
        XCTAssertEqual(apdus[1].cid, 0x0042)
    }

    func testFramesOnAChannelNobodyOpenedAreNotAPDUs() throws {
        var packets: [(H4Packet, Bool)] = []
        for f in kFrames(AliroFrame.command([0x00, 0xA4, 0x04, 0x00]).encoded(), cid: 0x0041, mps: 100) { packets += acl(f).map { ($0, false) } }
        XCTAssertEqual(try BTSnoopCapture(parsing: try capture(packets)).accessAPDUs(), [])
    }

    func testHostileFilesAreRefusedNotTrapped() throws {
        XCTAssertThrowsError(try BTSnoopCapture(parsing: Array("not a capture".utf8)))
        var header = Array("btsnoop\0".utf8) + [0, 0, 0, 2, 0, 0, 0x03, 0xEA]
        XCTAssertThrowsError(try BTSnoopCapture(parsing: header), "version 2")
        header = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xE9]
        XCTAssertThrowsError(try BTSnoopCapture(parsing: header), "datalink 1001")
        header = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        XCTAssertNoThrow(try BTSnoopCapture(parsing: header))
        XCTAssertThrowsError(try BTSnoopCapture(parsing: header + [0, 0, 0, 4, 0, 0]), "truncated record header")
        let huge: [UInt8] = [0, 1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        XCTAssertThrowsError(try BTSnoopCapture(parsing: header + huge), "a record longer than the file")
        // Garbage ACL in a well-formed record: no APDU, no crash.
        let garbage: [UInt8] = [0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [0x02, 0xFF, 0xFF, 0xFF, 0xFF]
        XCTAssertEqual(try BTSnoopCapture(parsing: header + garbage).accessAPDUs(), [])
    }
}

enum AliroFrameTestAID {
    static let aid: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01]
}
