// fuzz-module: BLE
// fuzz-sources: ATT GATT/GATTDatabase.swift Aliro/AliroBLE.swift HCI/HCIEvent.swift Bytes.swift BLEError.swift
// libFuzzer entry for the ATT server (what a phone, or anything that connects, asks the lock's
// GATT database) and the Aliro frames carried over the lock's credit-based channel. Compiled
// into module `BLE` by Tests/Fuzz/fuzz.sh — only the files the server needs (fuzz-sources), which
// compiles in a third of the time of the whole module.
//
// Input: a sequence of ATT PDUs, each as one length byte then that many bytes (a short last PDU
// takes what is left), all to one server over the lock's database (GAP, GATT, the Aliro service,
// and a notifying characteristic with a long value).
//
// Properties, per PDU: no trap; a request gets exactly one response and anything else none; the
// response fits the ATT_MTU in force; it is the request's response opcode or a 5-byte Error
// Response naming the request; list responses are whole items (Find Information, Find By Type
// Value, Read By Type, Read By Group Type) naming handles that exist; notifications and
// indications of any value fit the MTU. Each PDU is also parsed as an Aliro frame, which must
// re-encode to its bytes.

import ByteCore
import Foundation  // ATT.swift uses String.replacingOccurrences; the module's other files import it

private let notifyUUID = BLEUUID(0xAAAA)
private let otherUUID = BLEUUID("0000BBBB-1111-2222-3333-444455556666")!
private let longValue = [UInt8](repeating: 0x5A, count: 600)
/// Built once; the database is rebuilt only after an input that may have written to it.
private let services = GATTDatabase.standardServices(deviceName: "LockBench")
    + [AliroBLE.service(psm: AliroBLE.defaultPSM)]
    + [ServiceDefinition(uuid: BLEUUID(0x180F), characteristics: [
        CharacteristicDefinition(uuid: notifyUUID, properties: [.read, .notify, .indicate, .write], value: (0..<300).map { UInt8(truncatingIfNeeded: $0) }),
        CharacteristicDefinition(uuid: otherUUID, properties: [.writeWithoutResponse, .read]),
    ])]

private func u16(_ p: [UInt8], _ at: Int) -> UInt16 { UInt16(p[at]) | UInt16(p[at + 1]) << 8 }

/// Checks that `items` (after the fixed header) are whole items of `size` bytes whose first
/// handle exists.
private func checkItems(_ r: [UInt8], from start: Int, size: Int, server: ATTServer) {
    guard size > 0, r.count > start, (r.count - start) % size == 0 else { fatalError("ATT list response not whole items: \(r.hex)") }
    for i in stride(from: start, to: r.count, by: size) {
        guard server.database.attribute(u16(r, i)) != nil else { fatalError("ATT response names a missing handle: \(r.hex)") }
    }
}

private func check(_ pdu: [UInt8], _ response: [UInt8]?, server: ATTServer) {
    let op = pdu[0]
    guard let r = response else {
        if ATTOpcode.isRequest(op) { fatalError("request 0x\([op].hex) got no response") }
        return
    }
    guard ATTOpcode.isRequest(op) else { fatalError("0x\([op].hex) is not a request but got \(r.hex)") }
    guard !r.isEmpty, r.count <= server.mtu else { fatalError("response of \(r.count) bytes exceeds ATT_MTU \(server.mtu): \(r.hex)") }
    if r[0] == ATTOpcode.errorResponse {
        guard r.count == 5, r[1] == op, r[4] != 0 else { fatalError("bad error response \(r.hex) to 0x\([op].hex)") }
        return
    }
    guard r[0] == op + 1 else { fatalError("response 0x\([r[0]].hex) to request 0x\([op].hex)") }
    switch op {
    case ATTOpcode.exchangeMTURequest:
        guard r.count == 3, Int(u16(r, 1)) == server.maxMTU else { fatalError("bad Exchange MTU response \(r.hex)") }
    case ATTOpcode.findInformationRequest:
        guard r.count >= 2, r[1] == 1 || r[1] == 2 else { fatalError("bad Find Information format \(r.hex)") }
        checkItems(r, from: 2, size: r[1] == 1 ? 4 : 18, server: server)
    case ATTOpcode.findByTypeValueRequest:
        checkItems(r, from: 1, size: 4, server: server)
    case ATTOpcode.readByTypeRequest, ATTOpcode.readByGroupTypeRequest:
        guard r.count >= 2 else { fatalError("short list response \(r.hex)") }
        checkItems(r, from: 2, size: Int(r[1]), server: server)
    case ATTOpcode.writeRequest, ATTOpcode.executeWriteRequest:
        guard r.count == 1 else { fatalError("write response with data: \(r.hex)") }
    case ATTOpcode.prepareWriteRequest:
        guard r.count == pdu.count, Array(r[1...]) == Array(pdu[1...]) else { fatalError("Prepare Write Response does not echo the request") }
    default:
        break
    }
}

nonisolated(unsafe) private var database = GATTDatabase(services: services)
nonisolated(unsafe) private var databaseWritten = false
private let valueHandle = database.valueHandle(of: notifyUUID)!

/// Notifications and indications of a value longer than any MTU must be cut to fit it.
private func checkNotifications(_ server: ATTServer) {
    for out in [server.notification(handle: valueHandle, value: longValue), server.indication(handle: valueHandle, value: longValue)] {
        if let out, out.count > server.mtu { fatalError("notification of \(out.count) bytes exceeds ATT_MTU \(server.mtu)") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if databaseWritten { database = GATTDatabase(services: services); databaseWritten = false }
    var server = ATTServer(database: database)
    var i = 0
    while i < bytes.count {
        let n = Int(bytes[i])
        let pdu = Array(bytes[(i + 1)..<min(bytes.count, i + 1 + n)])
        i += 1 + n
        if let frame = try? AliroFrame(parsing: pdu), frame.encoded() != pdu { fatalError("Aliro frame does not re-encode: \(pdu.hex)") }
        guard !pdu.isEmpty else { continue }
        if [ATTOpcode.writeRequest, ATTOpcode.writeCommand, ATTOpcode.executeWriteRequest].contains(pdu[0]) { databaseWritten = true }
        let response = server.handle(pdu)
        check(pdu, response, server: server)
        guard (23...server.maxMTU).contains(server.mtu) else { fatalError("ATT_MTU \(server.mtu) out of range") }
        if pdu[0] == ATTOpcode.exchangeMTURequest { checkNotifications(server) }
    }
    checkNotifications(server)
    return 0
}
