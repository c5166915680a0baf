// fuzz-module: BLE
// fuzz-sources: Transport HCI L2CAP ATT GATT/GATTDatabase.swift Host.swift Connection.swift Aliro/AliroBLE.swift Bytes.swift BLEError.swift
// libFuzzer entry for what a BLE controller (and through it any peer in radio range) sends the
// host: the H4 byte stream, HCI events, ACL data, L2CAP reassembly and signaling, LE
// credit-based channels, SMP, and ATT as the host dispatches it. Compiled into module `BLE` by
// Tests/Fuzz/fuzz.sh (all but the lock, phone and GATT client on top: fuzz-sources); the host runs in-process (`beginSession(on:)` + `handle(_:)`, no reader
// thread, no init sequence) over a transport that records what it sends, and the entry plays the
// controller: it returns ACL credits (Number Of Completed Packets) and completes commands.
//
// Input: byte 0 seeds the chunk sizes; the rest is the controller → host H4 stream.
//
// Properties: the H4 decoder yields the same packets (and fails at the same byte) whatever the
// chunking, and the packets are exactly the bytes consumed; decoded events, ACL packets and
// commands re-encode to values that decode to themselves; the host never traps, and everything
// it sends is well formed: H4 packets that decode, commands that decode, ACL fragments within the
// controller's buffer size, L2CAP frames whose signaling commands decode and round-trip, ATT PDUs
// within the server's largest MTU, SMP answered only with Pairing Failed.

import ByteCore
import Foundation

/// Records what the host sends.
private final class RecordingTransport: HCITransport {
    var sent: [H4Packet] = []
    func send(_ packet: H4Packet) throws(BLEError) { sent.append(packet) }
    func receive() throws(BLEError) -> H4Packet { throw BLEError(.transportClosed, "fuzz: no reader") }
    func close() {}
}

private struct Chunker {
    var state: UInt64
    mutating func next() -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state % 96) + 1
    }
}

/// Packets decoded from `chunks`, and whether the decoder stopped on an unknown type byte.
private func decodeH4(_ chunks: [ArraySlice<UInt8>]) -> (packets: [H4Packet], failed: Bool, pending: Int) {
    var decoder = H4Decoder()
    var packets: [H4Packet] = []
    for chunk in chunks {
        decoder.feed(chunk)
        do {
            while let p = try decoder.next() { packets.append(p) }
        } catch {
            return (packets, true, decoder.pendingByteCount)
        }
    }
    return (packets, false, decoder.pendingByteCount)
}

private func checkRoundTrips(_ packet: H4Packet) {
    switch packet.type {
    case .event:
        if let e = try? HCIEvent(parsing: packet.payload) {
            guard (try? HCIEvent(parsing: e.encoded())) == e else { fatalError("HCI event does not round-trip: \(packet.payload.hex)") }
        }
    case .acl:
        if let a = try? ACLPacket(parsing: packet.payload) {
            guard (try? ACLPacket(parsing: a.encoded())) == a else { fatalError("ACL packet does not round-trip: \(packet.payload.hex)") }
        }
    case .command:
        if let c = try? HCICommand(parsing: packet.payload) {
            guard (try? HCICommand(parsing: c.encoded())) == c else { fatalError("HCI command does not round-trip: \(packet.payload.hex)") }
        }
    case .sco, .iso:
        break
    }
}

/// Checks what the host sent and plays the controller's part: credits back for every ACL
/// packet, a Command Complete for every command. Returns the events to feed back.
private func checkSent(_ sent: [H4Packet], host: BLEHost, outgoing: inout [UInt16: L2CAPReassembler]) -> [H4Packet] {
    var completed: [UInt16: UInt16] = [:]
    var replies: [H4Packet] = []
    for packet in sent {
        var d = H4Decoder()
        d.feed(packet.encoded())
        guard (try? d.next()) == packet, d.pendingByteCount == 0 else { fatalError("host sent a packet H4 cannot frame: \(packet.encoded().hex)") }
        switch packet.type {
        case .command:
            guard let c = try? HCICommand(parsing: packet.payload) else { fatalError("host sent a malformed command: \(packet.payload.hex)") }
            replies.append(H4Packet(.event, HCIEvent.commandComplete(numPackets: 1, opcode: c.opcode, returnParameters: [0x00]).encoded()))
        case .acl:
            guard let acl = try? ACLPacket(parsing: packet.payload) else { fatalError("host sent a malformed ACL packet: \(packet.payload.hex)") }
            guard acl.data.count <= host.aclMaxLength else { fatalError("ACL fragment of \(acl.data.count) bytes > buffer \(host.aclMaxLength)") }
            completed[acl.handle, default: 0] += 1
            guard let frames = try? outgoing[acl.handle, default: L2CAPReassembler()].feed(acl) else {
                fatalError("host sent ACL fragments that do not reassemble")
            }
            for f in frames { checkFrame(f) }
        case .event, .sco, .iso:
            fatalError("host sent a \(packet.type) packet")
        }
    }
    let list = completed.sorted { $0.key < $1.key }.map { HCIEvent.Completed(handle: $0.key, count: $0.value) }
    for start in stride(from: 0, to: list.count, by: 63) {  // 63 handles fill one event's 255 bytes
        replies.append(H4Packet(.event, HCIEvent.numberOfCompletedPackets(Array(list[start..<min(list.count, start + 63)])).encoded()))
    }
    return replies
}

private func checkFrame(_ f: L2CAPFrame) {
    switch f.cid {
    case L2CAPChannelID.att:
        guard !f.payload.isEmpty, f.payload.count <= 247 else { fatalError("ATT PDU of \(f.payload.count) bytes sent") }
    case L2CAPChannelID.leSignaling:
        guard let commands = try? SignalingCommand.decodeAll(f.payload), !commands.isEmpty else {
            fatalError("host sent a malformed signaling frame: \(f.payload.hex)")
        }
        for c in commands where (try? SignalingCommand.decodeAll(c.encoded())) != [c] { fatalError("signaling command does not round-trip: \(c)") }
    case L2CAPChannelID.smp:
        guard f.payload == [PairingRefusal.pairingFailed, PairingRefusal.pairingNotSupported] else { fatalError("SMP reply \(f.payload.hex)") }
    default:
        guard f.cid >= L2CAPChannelID.firstDynamic else { fatalError("frame on reserved CID 0x\(String(f.cid, radix: 16))") }
    }
}

/// The lock's attribute table (built once; each input gets a fresh host and database).
private let services = GATTDatabase.standardServices(deviceName: "LockBench") + [AliroBLE.service(psm: AliroBLE.defaultPSM)]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCI(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let seed = bytes.first else { return 0 }
    let stream = bytes[1...]

    // The H4 decoder: whole stream vs chunks; the packets are the bytes consumed.
    var chunker = Chunker(state: UInt64(seed) << 32 | UInt64(stream.count) | 1)
    var chunks: [ArraySlice<UInt8>] = []
    var i = stream.startIndex
    while i < stream.endIndex {
        let end = min(stream.endIndex, i + chunker.next())
        chunks.append(stream[i..<end])
        i = end
    }
    let whole = decodeH4([stream])
    let split = decodeH4(chunks)
    guard whole.packets == split.packets, whole.failed == split.failed else { fatalError("chunking changed the H4 packets") }
    let consumed = whole.packets.flatMap { $0.encoded() }
    // What is left is the pending bytes, plus the type byte of a packet in progress.
    guard stream.starts(with: consumed), (0...1).contains(stream.count - consumed.count - whole.pending) else {
        fatalError("H4 packets are not the bytes consumed")
    }
    for p in whole.packets { checkRoundTrips(p) }

    // The host, in-process.
    let host = BLEHost(configuration: .init(open: { () throws(BLEError) -> HCITransport in throw BLEError(.transportUnavailable, "fuzz") }, addressSeed: 1, services: services, log: { _ in }))
    host.listen(psm: AliroBLE.defaultPSM, mtu: 256, mps: 64, credits: 4) { _ in }
    let transport = RecordingTransport()
    var outgoing: [UInt16: L2CAPReassembler] = [:]
    host.cond.lock()
    _ = host.beginSession(on: transport)
    for packet in whole.packets {
        var queue = [packet]
        var rounds = 0
        while !queue.isEmpty {
            for p in queue { host.handle(p) }
            let sent = transport.sent
            transport.sent = []
            queue = checkSent(sent, host: host, outgoing: &outgoing)
            rounds += 1
            guard rounds < 64 else { fatalError("host and controller never settle") }
        }
    }
    host.cond.unlock()
    return 0
}
