import Foundation

/// A real PostgreSQL server for the tests and the benchmark, needing nothing from the environment:
/// `LOCKBENCH_TEST_POSTGRES` (a postgres:// URL of a role that may CREATE DATABASE) when set,
/// otherwise a throwaway cluster started once per process — `initdb` + `pg_ctl` from PostgreSQL
/// 15's server binaries into a temporary directory, on a free loopback port, as the `postgres`
/// user when run as root (the server refuses root; CI runs as root). It is stopped when the process
/// exits. Each caller gets a database of its own (`database()`), so tests stay independent.
/// Missing binaries fail with the install line, never skip.
public enum ThrowawayPostgres {
    public static let binaries = "/usr/lib/postgresql/15/bin"

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// A new, empty database: its postgres:// URL.
    public static func database(_ prefix: String = "lbtest") throws -> String {
        let server = try Server.shared.get()
        let name = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try run(binaries + "/createdb", ["-h", server.host, "-p", String(server.port), "-U", server.user, name],
                environment: server.password.map { ["PGPASSWORD": $0] } ?? [:])
        return server.url(database: name)
    }

    struct Server: Sendable {
        var host: String, port: Int, user: String, password: String?, query: String

        func url(database: String) -> String {
            "postgres://\(user)\(password.map { ":" + $0 } ?? "")@\(host):\(port)/\(database)\(query)"
        }

        /// Started (or read from the environment) once, on first use.
        static let shared: Result<Server, Failure> = Result { try start() }.mapError { ($0 as? Failure) ?? Failure("\($0)") }

        static func start() throws -> Server {
            if let url = ProcessInfo.processInfo.environment["LOCKBENCH_TEST_POSTGRES"], !url.isEmpty {
                guard let c = URLComponents(string: url), let host = c.host, let user = c.user else {
                    throw Failure("LOCKBENCH_TEST_POSTGRES=\(url) is not postgres://USER[:PASSWORD]@HOST[:PORT]/DB")
                }
                return Server(host: host, port: c.port ?? 5432, user: user, password: c.password, query: c.query.map { "?" + $0 } ?? "")
            }
            guard FileManager.default.isExecutableFile(atPath: binaries + "/initdb") else {
                throw Failure("PostgreSQL 15's server binaries are missing (\(binaries)/initdb): apt-get install postgresql-15 "
                              + "(.ci/run installs it), or set LOCKBENCH_TEST_POSTGRES=postgres://USER@HOST:PORT/postgres to use a running server")
            }
            let dir = NSTemporaryDirectory() + "lockbench-pg-" + UUID().uuidString
            let data = dir + "/data"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let asRoot = getuid() == 0
            // The server refuses to run as root: as root, the cluster belongs to `postgres`.
            let prefix = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
            if asRoot { try run("/bin/chown", ["postgres", dir]) }
            try run(prefix, binaries + "/initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
            stopDirectory = (data, asRoot)
            atexit { ThrowawayPostgres.stop() }
            var lastError: Error?
            for _ in 0..<5 {   // a port found free may be taken before the server binds it: try another
                let port = try freePort()
                do {
                    try run(prefix, binaries + "/pg_ctl", ["-D", data, "-l", dir + "/server.log", "-w", "-t", "60", "-o",
                                                           "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c max_connections=300", "start"])
                    return Server(host: "127.0.0.1", port: port, user: "postgres", password: nil, query: "?sslmode=disable")
                } catch { lastError = error }
            }
            throw Failure("the throwaway PostgreSQL did not start (log: \(dir)/server.log): \(lastError.map { "\($0)" } ?? "")")
        }
    }

    nonisolated(unsafe) static var stopDirectory: (data: String, asRoot: Bool)?

    static func stop() {
        guard let (data, asRoot) = stopDirectory else { return }
        let prefix = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
        try? run(prefix, binaries + "/pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: (data as NSString).deletingLastPathComponent)
    }

    /// Runs a command to completion, its output to a file. posix_spawn + waitpid rather than
    /// Foundation's Process: `pg_ctl start` leaves a server running that inherits the descriptors
    /// Process watches to learn that its child ended, so Process would wait for the server.
    static func run(_ prefix: [String] = [], _ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let command = prefix + [tool] + arguments
        let outPath = NSTemporaryDirectory() + "lockbench-pg-run-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv = command.map { strdup($0) } + [nil], envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure("cannot run \(command[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            throw Failure("\(command.joined(separator: " ")) \(exited ? "exited \(code)" : "was killed (signal \(status & 0x7f))"): \(text.suffix(600))")
        }
    }

    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        try run([], tool, arguments, environment: environment)
    }

    /// A loopback TCP port nothing listens on now (bound to port 0, then released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw Failure("bind() failed: errno \(errno)") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        guard named == 0 else { throw Failure("getsockname() failed: errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
