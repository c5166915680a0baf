import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The trust bench's phones on the wire: keep-alive HTTP/1.1 connections driven by one thread
/// with poll(2), as load generators (wrk, h2load) do. The phones share the machine's cores with
/// the server they measure; through async-http-client each request cost the phones' process
/// ≈ 100 µs of CPU, which the server then lacked. Here it is a write and a read or two.
///
/// Connection c of C runs requests k = c, c + C, c + 2C, … one after another, so work that must
/// not overlap (rotations of one refresh token) is given to one connection by its k.
final class HTTPLoad {
    struct Response {
        var status: Int
        var body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private final class Connection {
        let fd: Int32
        var next: Int
        var inFlight: Int?
        var started: UInt64 = 0
        var pending: [UInt8] = []
        var received: [UInt8] = []
        init(fd: Int32, first: Int) { self.fd = fd; next = first }
    }

    private let connections: [Connection]

    /// `ports[c mod ports.count]` is connection c's server (several instances of one service).
    init(ports: [Int], connections count: Int) throws {
        guard !ports.isEmpty, count > 0 else { throw Failure(description: "no server or no connections") }
        var out = [Connection]()
        for c in 0..<count {
            do { out.append(Connection(fd: try Self.connect(port: ports[c % ports.count]), first: c)) } catch {
                out.forEach { _ = close($0.fd) }
                throw error
            }
        }
        connections = out
    }

    deinit { connections.forEach { _ = close($0.fd) } }

    /// Runs requests 0..<n: `request(k)` is the bytes of request k, `check(k, response)` throws
    /// if the answer is wrong. Returns each request's latency (ms, write to whole answer) and the
    /// wall time (s).
    func run(_ n: Int, request: (Int) -> [UInt8], check: (Int, Response) throws -> Void) throws -> (latencies: [Double], seconds: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        var latencies = [Double]()
        latencies.reserveCapacity(n)
        let count = connections.count
        for (c, conn) in connections.enumerated() { conn.next = c; conn.inFlight = nil; conn.received.removeAll(keepingCapacity: true) }
        func send(_ conn: Connection) throws {
            guard conn.inFlight == nil, conn.next < n else { return }
            conn.inFlight = conn.next
            conn.next += count
            conn.started = DispatchTime.now().uptimeNanoseconds
            conn.pending = request(conn.inFlight!)
            try flush(conn)
        }
        for conn in connections { try send(conn) }
        var fds = connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var done = 0
        while done < n {
            for (i, conn) in connections.enumerated() {
                fds[i].events = Int16(POLLIN) | (conn.pending.isEmpty ? 0 : Int16(POLLOUT))
                fds[i].revents = 0
            }
            let ready = poll(&fds, nfds_t(fds.count), 30_000)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw Failure(description: ready == 0 ? "no answer within 30 s" : "poll: \(String(cString: strerror(errno)))") }
            for (i, conn) in connections.enumerated() where fds[i].revents != 0 {
                if fds[i].revents & Int16(POLLOUT) != 0 { try flush(conn) }
                guard fds[i].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
                let got = buffer.withUnsafeMutableBytes { read(conn.fd, $0.baseAddress, $0.count) }
                if got < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                guard got > 0 else { throw Failure(description: "the server closed connection \(i)\(got < 0 ? ": \(String(cString: strerror(errno)))" : "")") }
                conn.received += buffer[0..<got]
                guard let (response, used) = try Self.parse(conn.received) else { continue }
                guard let k = conn.inFlight else { throw Failure(description: "an answer nobody asked for on connection \(i)") }
                conn.received.removeFirst(used)
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - conn.started) / 1e6)
                conn.inFlight = nil
                done += 1
                try check(k, response)
                try send(conn)
            }
        }
        return (latencies, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    private func flush(_ conn: Connection) throws {
        while !conn.pending.isEmpty {
            let n = conn.pending.withUnsafeBytes { write(conn.fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN { return }
            guard n > 0 else { throw Failure(description: "write: \(String(cString: strerror(errno)))") }
            conn.pending.removeFirst(n)
        }
    }

    /// One whole response at the start of `bytes` and its length, or nil when more must come.
    /// Content-Length bodies only (what the trust server sends); 204 and 304 have none.
    static func parse(_ bytes: [UInt8]) throws -> (Response, Int)? {
        guard let end = headerEnd(bytes) else {
            if bytes.count > 16384 { throw Failure(description: "a response head over 16 KiB") }
            return nil
        }
        let head = String(decoding: bytes[0..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Failure(description: "not an HTTP/1.1 status line: \(lines.first.map(String.init) ?? "")")
        }
        var length = 0
        for line in lines.dropFirst() {
            let kv = line.split(separator: ":", maxSplits: 1)
            guard kv.count == 2 else { continue }
            let name = kv[0].lowercased()
            if name == "content-length" {
                guard let n = Int(kv[1].trimmingCharacters(in: .whitespaces)), n >= 0, n <= 64 << 20 else {
                    throw Failure(description: "bad Content-Length: \(kv[1])")
                }
                length = n
            } else if name == "transfer-encoding" {
                throw Failure(description: "a chunked response (the bench's client reads Content-Length bodies only)")
            }
        }
        let bodyStart = end + 4
        guard bytes.count >= bodyStart + length else { return nil }
        return (Response(status: status, body: Array(bytes[bodyStart..<(bodyStart + length)])), bodyStart + length)
    }

    private static func headerEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
        return nil
    }

    private static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else {
            let text = String(cString: strerror(errno))
            _ = close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): \(text)")
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    // MARK: the requests

    static func get(_ path: String, port: Int, bearer: String? = nil) -> [UInt8] {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if let bearer { text += "Authorization: Bearer \(bearer)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    static func postForm(_ path: String, port: Int, _ fields: [(String, String)]) -> [UInt8] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = fields.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        let text = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        return Array(text.utf8)
    }

    /// The string value of `"name":"…"` in a JSON body (the trust API's values have no escapes
    /// where the bench reads them: cursors and tokens), or nil.
    static func stringMember(_ name: String, in body: [UInt8]) -> String? {
        let needle = Array("\"\(name)\":\"".utf8)
        guard let at = firstIndex(of: needle, in: body) else { return nil }
        let from = at + needle.count
        guard let to = body[from...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: body[from..<to], as: UTF8.self)
    }

    /// How many times `"name":` occurs in a JSON body.
    static func count(_ name: String, in body: [UInt8]) -> Int {
        let needle = Array("\"\(name)\":".utf8)
        var n = 0, from = 0
        while let at = firstIndex(of: needle, in: body, from: from) { n += 1; from = at + needle.count }
        return n
    }

    private static func firstIndex(of needle: [UInt8], in body: [UInt8], from: Int = 0) -> Int? {
        guard !needle.isEmpty, body.count >= needle.count, from <= body.count - needle.count else { return nil }
        var i = from
        while i <= body.count - needle.count {
            if body[i] == needle[0] && body[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
