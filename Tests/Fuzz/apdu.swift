// libFuzzer entry for the APDU parsers and chaining assemblers. Compiled into module `Codecs`
// by Tests/Fuzz/fuzz.sh. Properties: no crash; a parsed command or response encodes back to the
// same bytes; chaining the parsed command and reassembling it gives it back; the response
// chainer and assembler round-trip the data.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPDU(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let command = try? CommandAPDU(parsing: bytes) {
        guard (try? command.encoded()) == bytes else { fatalError("command does not re-encode to its bytes") }
        if !command.isChained {
            var assembler = CommandAssembler()
            var whole: CommandAPDU?
            for part in CommandChainer.split(command, chunk: max(1, Int(bytes.first ?? 1) % 32 + 1)) {
                guard let step = try? assembler.feed(part) else { fatalError("assembler refused its own chain") }
                if case .complete(let c) = step { whole = c }
            }
            guard whole == command else { fatalError("chain does not reassemble") }
        }
    }
    if let response = try? ResponseAPDU(parsing: bytes) {
        guard response.bytes == bytes else { fatalError("response does not re-encode to its bytes") }
        var chainer = ResponseChainer(chunk: max(1, Int(bytes.last ?? 1) % 64 + 1))
        var assembler = ResponseAssembler()
        var r = chainer.start(response.data, status: response.status.isBytesRemaining ? .success : response.status)
        var rounds = 0
        while true {
            guard let step = try? assembler.feed(r) else { fatalError("assembler refused the chain") }
            if case .send(let get) = step { r = chainer.next(le: get.le ?? 256) } else if case .complete(let all) = step {
                guard all.data == response.data else { fatalError("response chain lost data") }
                break
            }
            rounds += 1
            if rounds > 10_000 { fatalError("response chain does not end") }
        }
    }
    // Raw stream of concatenated commands through the chaining assembler: must never trap.
    var assembler = CommandAssembler(limit: 1024)
    var offset = 0
    while offset + 4 <= bytes.count {
        let n = min(bytes.count - offset, 4 + Int(bytes[offset + 3] % 16))
        if let c = try? CommandAPDU(parsing: bytes[offset..<offset + n]) { _ = try? assembler.feed(c) }
        offset += n
    }
    return 0
}
