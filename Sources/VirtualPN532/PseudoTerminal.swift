#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The bus: a pseudo-terminal whose slave side (`/dev/pts/N`) libnfc's `pn532_uart` driver opens
/// as if it were a serial port. Moves bytes only; knows nothing about PN532 frames.
///
/// The emulator keeps its own slave fd open for its whole life (otherwise reads on the master
/// fail with EIO whenever no client has the slave open) and puts the slave in raw mode before any
/// client opens it (no echo of our replies back to us, no line editing).
/// Sendable: file descriptors, used through syscalls the kernel serialises; `close` runs once.
final class PseudoTerminal: Sendable {
    let masterFD: Int32
    private let slaveFD: Int32
    /// `/dev/pts/N`.
    let path: String
    /// The stable symlink pointing at `path`, when one was asked for.
    let link: String?
    private let closed = Atomic(false)

    init(link: String?) throws(PN532Error) {
        // posix_openpt/grantpt/unlockpt/ptsname as glibc implements them on Linux (Swift's Glibc
        // module does not export them without _XOPEN_SOURCE): open /dev/ptmx, clear the lock
        // with TIOCSPTLCK, ask the pts number with TIOCGPTN; devpts needs no grantpt.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw PN532Error(.ptyUnavailable, "opening /dev/ptmx failed: \(Self.errnoText()); is devpts mounted?") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, Self.TIOCSPTLCK, &unlock) == 0, ioctl(master, Self.TIOCGPTN, &number) == 0 else {
            let text = Self.errnoText()
            _ = Glibc.close(master)
            throw PN532Error(.ptyUnavailable, "unlockpt/ptsname (TIOCSPTLCK/TIOCGPTN) failed: \(text)")
        }
        let path = "/dev/pts/\(number)"
        let slave = open(path, O_RDWR | O_NOCTTY)
        guard slave >= 0 else {
            let text = Self.errnoText()
            _ = Glibc.close(master)
            throw PN532Error(.ptyUnavailable, "opening \(path) failed: \(text)")
        }
        var tio = termios()
        if tcgetattr(slave, &tio) == 0 {
            cfmakeraw(&tio)
            tio.c_cflag |= tcflag_t(CLOCAL | CREAD)
            _ = tcsetattr(slave, TCSANOW, &tio)
        }
        let flags = fcntl(master, F_GETFL)
        _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
        self.masterFD = master
        self.slaveFD = slave
        self.path = path
        if let link {
            // Replace a stale symlink from an earlier run, never a real file.
            var st = stat()
            if lstat(link, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFLNK else {
                    _ = Glibc.close(slave); _ = Glibc.close(master)
                    throw PN532Error(.linkUnavailable, "\(link) exists and is not a symlink; choose another --link path or remove it")
                }
                _ = unlink(link)
            }
            guard symlink(path, link) == 0 else {
                let text = Self.errnoText()
                _ = Glibc.close(slave); _ = Glibc.close(master)
                throw PN532Error(.linkUnavailable, "symlink \(link) -> \(path) failed: \(text)")
            }
        }
        self.link = link
    }

    deinit { close() }

    /// Reads what is available (non-blocking); empty when nothing is, nil when the pty failed.
    func readAvailable() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(masterFD, $0.baseAddress, $0.count) }
        if n > 0 { return Array(buffer[0..<n]) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
        if n < 0 && errno == EIO { return [] }  // no client at the moment
        return n == 0 ? [] : nil
    }

    /// Writes all bytes to the client. When nobody reads and the tty buffer is full, the stale
    /// input is dropped (a new client flushes it at open anyway).
    func write(_ bytes: [UInt8]) {
        var offset = 0
        var attempts = 0
        while offset < bytes.count && attempts < 50 {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(masterFD, $0.baseAddress, $0.count) }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            attempts += 1
            if attempts == 1 { _ = tcflush(slaveFD, TCIFLUSH) }
            var pfd = pollfd(fd: masterFD, events: Int16(POLLOUT), revents: 0)
            _ = poll(&pfd, 1, 10)
        }
    }

    /// TIOCEXCL while a client session runs: further open(2)s of the slave fail with EBUSY
    /// (except for processes with CAP_SYS_ADMIN, which the kernel always lets through).
    func setExclusive(_ exclusive: Bool) {
        _ = ioctl(slaveFD, exclusive ? UInt(TIOCEXCL) : UInt(TIOCNXCL))
    }

    /// Whether the slave is in exclusive mode (TIOCGEXCL).
    var isExclusive: Bool {
        var value: Int32 = 0
        // TIOCGEXCL = _IOR('T', 0x40, int), a function-like macro Swift does not import.
        return ioctl(slaveFD, UInt(0x8004_5440), &value) == 0 && value != 0
    }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let link { _ = unlink(link) }
        _ = Glibc.close(masterFD)
        _ = Glibc.close(slaveFD)
    }

    /// `_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)`: function-like macros Swift does not import.
    private static let TIOCSPTLCK: UInt = 0x4004_5431
    private static let TIOCGPTN: UInt = 0x8004_5430

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
