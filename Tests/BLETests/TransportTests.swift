@testable import BLE
import ByteCore
import Glibc
import XCTest

final class H4DecoderTests: XCTestCase {
    /// A stream of every packet type, including an ACL larger than 27 bytes and an empty event.
    static let packets: [H4Packet] = [
        H4Packet(.command, HCICommand.reset.encoded()),
        H4Packet(.event, HCIEvent.commandComplete(numPackets: 1, opcode: 0x0C03, returnParameters: [0]).encoded()),
        H4Packet(.acl, ACLPacket(handle: 1, boundary: .firstFlushable, data: Array(0..<200)).encoded()),
        H4Packet(.event, [0xFF, 0x00]),
        H4Packet(.sco, [0x01, 0x00, 0x03, 1, 2, 3]),
        H4Packet(.iso, [0x01, 0x00, 0x02, 0x00, 9, 9]),
        H4Packet(.acl, ACLPacket(handle: 0x0EFF, boundary: .continuing, data: []).encoded()),
    ]
    static var stream: [UInt8] { packets.flatMap { $0.encoded() } }

    private func decode(chunks: [[UInt8]]) throws -> [H4Packet] {
        var d = H4Decoder()
        var out = [H4Packet]()
        for c in chunks { out += try d.frames(after: c) }
        XCTAssertEqual(d.pendingByteCount, 0)
        return out
    }

    func testByteByByte() throws {
        XCTAssertEqual(try decode(chunks: Self.stream.map { [$0] }), Self.packets)
    }

    func testAllAtOnce() throws {
        XCTAssertEqual(try decode(chunks: [Self.stream]), Self.packets)
    }

    func testRandomBatches() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var chunks = [[UInt8]]()
            var s = Self.stream[...]
            while !s.isEmpty {
                let n = Int.random(in: 1...max(1, min(s.count, 40)), using: &rng)
                chunks.append(Array(s.prefix(n)))
                s = s.dropFirst(n)
            }
            XCTAssertEqual(try decode(chunks: chunks), Self.packets)
        }
    }

    func testShuffledPacketOrderDecodesInThatOrder() throws {
        for _ in 0..<50 {
            let shuffled = Self.packets.shuffled()
            let bytes = shuffled.flatMap { $0.encoded() }
            XCTAssertEqual(try decode(chunks: stride(from: 0, to: bytes.count, by: 7).map { Array(bytes[$0..<min(bytes.count, $0 + 7)]) }), shuffled)
        }
    }

    func testPartialPacketNeedsMoreBytes() throws {
        var d = H4Decoder()
        d.feed([0x04, 0x0E, 0x04, 0x01])
        XCTAssertNil(try d.next())
        d.feed([0x03, 0x0C, 0x00])
        XCTAssertEqual(try d.next(), H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
    }

    func testUnknownPacketTypeIsAnError() {
        var d = H4Decoder()
        d.feed([0x09, 0x00])
        XCTAssertThrowsError(try d.next()) { XCTAssertEqual(($0 as? BLEError)?.code, .malformedPacket) }
    }
}

final class TransportSpecTests: XCTestCase {
    func testSchemes() throws {
        XCTAssertEqual(try TransportSpec(parsing: "hci0"), .userChannel(index: 0))
        XCTAssertEqual(try TransportSpec(parsing: "hci12"), .userChannel(index: 12))
        XCTAssertEqual(try TransportSpec(parsing: "uart:/dev/ttyACM0:1000000"), .uart(path: "/dev/ttyACM0", baud: 1_000_000))
        XCTAssertEqual(try TransportSpec(parsing: "uart:/dev/ttyUSB1"), .uart(path: "/dev/ttyUSB1", baud: 1_000_000))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:127.0.0.1:9101"), .tcp(host: "127.0.0.1", port: 9101))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:[::1]:9101"), .tcp(host: "::1", port: 9101))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:_:9101"), .tcp(host: "127.0.0.1", port: 9101))
        XCTAssertEqual(try TransportSpec(parsing: "unix:/tmp/c.sock"), .unix(path: "/tmp/c.sock"))
        XCTAssertEqual(try TransportSpec(parsing: "tcp:localhost:1").description, "tcp:localhost:1")
    }

    func testBadSpecs() {
        for bad in ["", "hci", "hcix", "bt:1", "tcp:host", "tcp:host:0", "tcp:host:70000", "uart:", "uart:/dev/ttyS0:12345", "unix:"] {
            XCTAssertThrowsError(try TransportSpec(parsing: bad), bad) { XCTAssertEqual(($0 as? BLEError)?.code, .badTransportSpec, bad) }
        }
    }

    /// This machine (and CI) has no AF_BLUETOOTH: opening hci0 must say so and how to fix it.
    func testUserChannelWithoutKernelBluetoothExplains() throws {
        let probe = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 { close(probe); throw XCTSkip("this kernel has AF_BLUETOOTH") }
        XCTAssertThrowsError(try TransportSpec(parsing: "hci0").open()) { error in
            let e = error as? BLEError
            XCTAssertEqual(e?.code, .bluetoothUnsupported)
            XCTAssertTrue(e?.reason.contains("modprobe bluetooth") ?? false, e?.reason ?? "")
            XCTAssertTrue(e?.reason.contains("tcp:") ?? false)
        }
    }

    func testUserChannelErrorsNameTheFix() {
        let busy = Syscalls.userChannelError(errno: EBUSY, stage: .bind, index: 1)
        XCTAssertEqual(busy.code, .adapterBusy)
        XCTAssertTrue(busy.reason.contains("sudo btmgmt --index 1 power off"), busy.reason)
        let perm = Syscalls.userChannelError(errno: EPERM, stage: .bind, index: 0)
        XCTAssertEqual(perm.code, .permissionDenied)
        XCTAssertTrue(perm.reason.contains("sudo setcap cap_net_admin+eip $(which lockbench)"), perm.reason)
        XCTAssertEqual(Syscalls.userChannelError(errno: EACCES, stage: .socket, index: 0).code, .permissionDenied)
        XCTAssertEqual(Syscalls.userChannelError(errno: ENODEV, stage: .bind, index: 3).code, .noSuchDevice)
        XCTAssertEqual(Syscalls.userChannelError(errno: EAFNOSUPPORT, stage: .socket, index: 0).code, .bluetoothUnsupported)
        XCTAssertEqual(Syscalls.userChannelError(errno: EIO, stage: .bind, index: 0).code, .transportUnavailable)
    }

    func testTCPRefusedAndUnixMissing() {
        let port = VirtualControllers.freePort()
        XCTAssertThrowsError(try TransportSpec(parsing: "tcp:127.0.0.1:\(port)").open()) { XCTAssertEqual(($0 as? BLEError)?.code, .transportUnavailable) }
        XCTAssertThrowsError(try TransportSpec(parsing: "unix:/nonexistent/ctl.sock").open()) { XCTAssertEqual(($0 as? BLEError)?.code, .noSuchDevice) }
        XCTAssertThrowsError(try TransportSpec(parsing: "uart:/dev/nonexistent-tty").open()) { XCTAssertEqual(($0 as? BLEError)?.code, .noSuchDevice) }
        XCTAssertThrowsError(try TransportSpec(parsing: "uart:/dev/null").open()) { XCTAssertEqual(($0 as? BLEError)?.code, .transportUnavailable) }
    }

    /// H4 over a unix socket pair: packets written by one side arrive whole on the other.
    func testFileDescriptorTransportOverSocketPair() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        let a = FileDescriptorTransport(fd: fds[0], name: "a"), b = FileDescriptorTransport(fd: fds[1], name: "b")
        for p in H4DecoderTests.packets { try a.send(p) }
        for p in H4DecoderTests.packets { XCTAssertEqual(try b.receive(), p) }
        a.close()
        XCTAssertThrowsError(try b.receive()) { XCTAssertEqual(($0 as? BLEError)?.code, .transportClosed) }
        XCTAssertThrowsError(try a.send(H4DecoderTests.packets[0])) { XCTAssertEqual(($0 as? BLEError)?.code, .transportClosed) }
    }

    func testBTSnoopHeaderAndRecord() throws {
        XCTAssertEqual(BTSnoopTransport.fileHeader, Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA])
        let rec = BTSnoopTransport.record(H4Packet(.event, [0x0E, 0x01, 0x01]), received: true, microsecondsSince1970: 0)
        XCTAssertEqual(Array(rec[0..<16]), [0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0])
        // The btsnoop epoch offset Wireshark subtracts: 0x00DCDDB30F2F8000 µs = 719 540 days.
        XCTAssertEqual(Array(rec[16..<24]), [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00])
        XCTAssertEqual(BTSnoopTransport.epochOffset, 719_540 * 86_400 * 1_000_000)
        XCTAssertEqual(Array(rec[24...]), [0x04, 0x0E, 0x01, 0x01])
        let sent = BTSnoopTransport.record(H4Packet(.acl, [1, 0, 0, 0]), received: false, microsecondsSince1970: 1)
        XCTAssertEqual(Array(sent[8..<12]), [0, 0, 0, 0])
    }
}
