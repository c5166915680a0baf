@testable import BLE
import ByteCore
import XCTest

final class L2CAPTests: XCTestCase {
    func testACLRoundTrip() throws {
        for b in [ACLPacket.Boundary.firstNonFlushable, .continuing, .firstFlushable] {
            let p = ACLPacket(handle: 0x0ABC, boundary: b, data: [1, 2, 3])
            XCTAssertEqual(try ACLPacket(parsing: p.encoded()), p)
        }
        XCTAssertThrowsError(try ACLPacket(parsing: [1, 0, 5, 0, 1]))
    }

    func testFragmentAndReassembleAtEverySize() throws {
        let frame = L2CAPFrame(cid: 0x0040, payload: (0..<300).map { UInt8($0 & 0xFF) })
        for size in [1, 5, 27, 251, 400] {
            let fragments = ACLPacket.fragments(of: frame.encoded(), handle: 1, maxLength: size)
            XCTAssertEqual(fragments.first?.boundary, .firstNonFlushable)
            XCTAssertTrue(fragments.dropFirst().allSatisfy { $0.boundary == .continuing })
            XCTAssertTrue(fragments.allSatisfy { $0.data.count <= size })
            var r = L2CAPReassembler()
            var out = [L2CAPFrame]()
            for f in fragments { out += try r.feed(f) }
            XCTAssertEqual(out, [frame], "size \(size)")
        }
    }

    /// Bumble's controller delivers whole frames in one oversized ACL packet (PB=10).
    func testOversizedACLAndBackToBackFrames() throws {
        var r = L2CAPReassembler()
        let a = L2CAPFrame(cid: 4, payload: [0x0A, 1, 0]), b = L2CAPFrame(cid: 5, payload: Array(repeating: 7, count: 100))
        XCTAssertEqual(try r.feed(ACLPacket(handle: 1, boundary: .firstFlushable, data: a.encoded() + b.encoded())), [a, b])
        XCTAssertThrowsError(try r.feed(ACLPacket(handle: 1, boundary: .continuing, data: [1])))
    }

    func testNewStartDropsAnIncompleteFrame() throws {
        var r = L2CAPReassembler()
        XCTAssertEqual(try r.feed(ACLPacket(handle: 1, boundary: .firstFlushable, data: [10, 0, 4, 0, 1])), [])
        let f = L2CAPFrame(cid: 4, payload: [2])
        XCTAssertEqual(try r.feed(ACLPacket(handle: 1, boundary: .firstFlushable, data: f.encoded())), [f])
    }

    func testSignalingRoundTrip() throws {
        let all: [SignalingCommand] = [
            .commandReject(id: 1, reason: 0, data: []),
            .disconnectionRequest(id: 2, destinationCID: 0x40, sourceCID: 0x41),
            .disconnectionResponse(id: 2, destinationCID: 0x40, sourceCID: 0x41),
            .connectionParameterUpdateRequest(id: 3, intervalMin: 6, intervalMax: 12, latency: 0, timeout: 100),
            .connectionParameterUpdateResponse(id: 3, result: 0),
            .leCreditConnectionRequest(id: 4, spsm: 0x80, sourceCID: 0x40, mtu: 1024, mps: 247, credits: 8),
            .leCreditConnectionResponse(id: 4, destinationCID: 0x41, mtu: 512, mps: 100, credits: 4, result: 0),
            .flowControlCredit(id: 5, cid: 0x40, credits: 3),
            .unknown(code: 0x17, id: 6, data: [1, 2, 3]),
        ]
        for c in all { XCTAssertEqual(try SignalingCommand.decodeAll(c.encoded()), [c]) }
        XCTAssertEqual(try SignalingCommand.decodeAll(all.flatMap { $0.encoded() }), all)
        XCTAssertEqual(SignalingCommand.leCreditConnectionRequest(id: 4, spsm: 0x80, sourceCID: 0x40, mtu: 1024, mps: 247, credits: 8).encoded(),
                       [0x14, 0x04, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x04, 0xF7, 0x00, 0x08, 0x00])
        XCTAssertThrowsError(try SignalingCommand.decodeAll([0x14, 0x01, 0x0A, 0x00, 0x80]))
    }

    func testPairingIsRefused() {
        XCTAssertEqual(PairingRefusal.reply(to: [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]), [0x05, 0x05])
        XCTAssertNil(PairingRefusal.reply(to: [0x05, 0x08]))
        XCTAssertNil(PairingRefusal.reply(to: []))
    }

    func testCreditChannelSegmentsWithinMPSAndCredits() throws {
        var ch = CreditChannelState(localCID: 0x40, remoteCID: 0x41, localMTU: 1024, localMPS: 50, initialReceiveCredits: 4,
                                    remoteMTU: 512, remoteMPS: 23, initialSendCredits: 2)
        let sdu = (0..<100).map { UInt8($0) }
        // 100 bytes + 2 length bytes in 23-byte K-frames = 5 frames; 2 credits.
        var frames = try ch.send(sdu)
        XCTAssertEqual(frames.count, 2)
        XCTAssertTrue(ch.hasPendingFrames)
        frames += ch.addSendCredits(10)
        XCTAssertEqual(frames.count, 5)
        XCTAssertTrue(frames.allSatisfy { $0.cid == 0x41 && $0.payload.count <= 23 })
        XCTAssertEqual(Array(frames[0].payload[0..<2]), [100, 0])
        XCTAssertEqual(frames.flatMap(\.payload).dropFirst(2).map { $0 }, sdu)
        XCTAssertThrowsError(try ch.send([UInt8](repeating: 0, count: 513)))
    }

    func testCreditChannelReassemblesAndReturnsCredits() throws {
        var rx = CreditChannelState(localCID: 0x40, remoteCID: 0x41, localMTU: 1024, localMPS: 23, initialReceiveCredits: 4,
                                    remoteMTU: 1024, remoteMPS: 23, initialSendCredits: 10)
        var tx = CreditChannelState(localCID: 0x41, remoteCID: 0x40, localMTU: 1024, localMPS: 23, initialReceiveCredits: 4,
                                    remoteMTU: 1024, remoteMPS: 23, initialSendCredits: 100)
        let sdu = (0..<60).map { UInt8($0) }
        let frames = try tx.send(sdu)
        XCTAssertEqual(frames.count, 3)
        var got: [UInt8]?
        var granted = 0
        for f in frames {
            let (s, g) = try rx.receive(f.payload)
            if let s { got = s }
            granted += g
        }
        XCTAssertEqual(got, sdu)
        XCTAssertGreaterThan(granted, 0)
        XCTAssertEqual(rx.receiveCredits, 4 - 3 + granted)
    }

    func testCreditChannelRejectsFramesWithoutCreditsOrTooLarge() throws {
        var rx = CreditChannelState(localCID: 0x40, remoteCID: 0x41, localMTU: 30, localMPS: 23, initialReceiveCredits: 1,
                                    remoteMTU: 100, remoteMPS: 23, initialSendCredits: 1)
        XCTAssertThrowsError(try rx.receive([UInt8](repeating: 0, count: 24)))
        XCTAssertThrowsError(try rx.receive([40, 0, 1]))
        var none = CreditChannelState(localCID: 0x40, remoteCID: 0x41, localMTU: 30, localMPS: 23, initialReceiveCredits: 0,
                                      remoteMTU: 100, remoteMPS: 23, initialSendCredits: 1)
        XCTAssertThrowsError(try none.receive([1, 0, 1]))
    }

    func testAliroFrameRoundTrip() throws {
        for f in [AliroFrame.command([0, 0xA4, 4, 0]), .response([0x90, 0]), .completed([]), AliroFrame(type: 3, id: 0, payload: Array(repeating: 1, count: 300))] {
            XCTAssertEqual(try AliroFrame(parsing: f.encoded()), f)
        }
        XCTAssertEqual(AliroFrame.command([0x90, 0x00]).encoded(), [0x00, 0x00, 0x00, 0x02, 0x90, 0x00])
        XCTAssertThrowsError(try AliroFrame(parsing: [0, 0, 0, 5, 1]))
        XCTAssertThrowsError(try AliroFrame(parsing: [0, 0, 0, 1, 1, 2]))
    }
}
