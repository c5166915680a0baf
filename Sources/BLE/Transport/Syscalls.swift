import CBlueZ
import Glibc

/// Every C call the BLE transports make, in one file (STYLE 11; swift-system `Syscalls.swift`):
/// the HCI user channel through BlueZ's socket API, TCP and unix sockets, the UART's termios.
/// Each wrapper turns errno into a `BLEError` that says what to do.
enum Syscalls {
    // MARK: HCI user channel

    /// `socket(AF_BLUETOOTH, SOCK_RAW|SOCK_CLOEXEC, BTPROTO_HCI)` + `bind` to
    /// `sockaddr_hci { AF_BLUETOOTH, index, HCI_CHANNEL_USER }`.
    static func openUserChannel(index: UInt16) throws(BLEError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw userChannelError(errno: errno, stage: .socket, index: index) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw userChannelError(errno: e, stage: .bind, index: index)
        }
        return fd
    }

    enum UserChannelStage: String { case socket, bind }

    /// The error and the exact fix for each way opening `hciN` fails.
    static func userChannelError(errno e: Int32, stage: UserChannelStage, index: UInt16) -> BLEError {
        let adapter = "hci\(index)"
        switch e {
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT:
            return BLEError(.bluetoothUnsupported,
                "\(adapter): this kernel has no Bluetooth sockets (AF_BLUETOOTH, errno \(e) on \(stage.rawValue)). "
                + "Load the module with `sudo modprobe bluetooth`, or use a virtual controller with --ble tcp:127.0.0.1:PORT "
                + "(`python3 -m bumble.apps.controllers tcp-server:_:9101 tcp-server:_:9102`).")
        case EBUSY:
            return BLEError(.adapterBusy,
                "\(adapter) is in use by bluetoothd (EBUSY). Power it down there first: `sudo btmgmt --index \(index) power off` "
                + "(or stop bluetoothd: `sudo systemctl stop bluetooth`).")
        case EPERM, EACCES:
            return BLEError(.permissionDenied,
                "\(adapter): the HCI user channel needs CAP_NET_ADMIN (\(e == EPERM ? "EPERM" : "EACCES")). "
                + "Run `sudo setcap cap_net_admin+eip $(which lockbench)` once, or run as root.")
        case ENODEV, ENXIO:
            return BLEError(.noSuchDevice,
                "\(adapter): no such Bluetooth adapter (ENODEV). List adapters with `btmgmt info` or `hciconfig -a`.")
        case EALREADY:
            return BLEError(.adapterBusy,
                "\(adapter) is already open on the user channel by another program (EALREADY); stop it first.")
        default:
            return BLEError(.transportUnavailable, "\(adapter): \(stage.rawValue) failed: \(String(cString: strerror(e))) (errno \(e))")
        }
    }

    // MARK: TCP and unix sockets

    static func connectTCP(host: String, port: UInt16) throws(BLEError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let gai = getaddrinfo(host, String(port), &hints, &result)
        guard gai == 0, let first = result else {
            throw BLEError(.transportUnavailable, "tcp:\(host):\(port): cannot resolve host: \(String(cString: gai_strerror(gai)))")
        }
        defer { freeaddrinfo(result) }
        var lastErrno: Int32 = 0
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let ai = info {
            let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd >= 0 {
                if connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    return fd
                }
                lastErrno = errno
                Glibc.close(fd)
            } else {
                lastErrno = errno
            }
            info = ai.pointee.ai_next
        }
        throw BLEError(.transportUnavailable,
            "tcp:\(host):\(port): cannot connect: \(String(cString: strerror(lastErrno))). Is the controller running "
            + "(`python3 -m bumble.apps.controllers tcp-server:_:\(port) …`)?")
    }

    static func connectUnix(path: String) throws(BLEError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard bytes.count < capacity else { throw BLEError(.badTransportSpec, "unix:\(path): path longer than \(capacity - 1) bytes") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BLEError(.transportUnavailable, "unix:\(path): socket: \(String(cString: strerror(errno)))") }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw BLEError(e == ENOENT ? .noSuchDevice : .transportUnavailable,
                           "unix:\(path): cannot connect: \(String(cString: strerror(e)))")
        }
        return fd
    }

    // MARK: UART

    static let supportedBauds = [9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000,
                                 921600, 1000000, 1152000, 1500000, 2000000, 3000000]

    static func baudConstant(_ baud: Int) -> speed_t? {
        switch baud {
        case 9600: return speed_t(B9600)
        case 19200: return speed_t(B19200)
        case 38400: return speed_t(B38400)
        case 57600: return speed_t(B57600)
        case 115200: return speed_t(B115200)
        case 230400: return speed_t(B230400)
        case 460800: return speed_t(B460800)
        case 500000: return speed_t(B500000)
        case 576000: return speed_t(B576000)
        case 921600: return speed_t(B921600)
        case 1000000: return speed_t(B1000000)
        case 1152000: return speed_t(B1152000)
        case 1500000: return speed_t(B1500000)
        case 2000000: return speed_t(B2000000)
        case 3000000: return speed_t(B3000000)
        default: return nil
        }
    }

    /// Opens a serial H4 controller: raw 8N1, hardware flow control (CRTSCTS), `baud`.
    static func openUART(path: String, baud: Int) throws(BLEError) -> Int32 {
        guard let speed = baudConstant(baud) else { throw BLEError(.badTransportSpec, "uart:\(path): unsupported speed \(baud)") }
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            switch e {
            case ENOENT, ENODEV, ENXIO:
                throw BLEError(.noSuchDevice, "uart:\(path): no such device. Is the controller plugged in (`ls /dev/ttyACM* /dev/ttyUSB*`)?")
            case EACCES, EPERM:
                throw BLEError(.permissionDenied, "uart:\(path): permission denied. Add yourself to the dialout group: `sudo usermod -aG dialout $USER` (then log in again).")
            default:
                throw BLEError(.transportUnavailable, "uart:\(path): \(String(cString: strerror(e)))")
            }
        }
        var tio = termios()
        guard tcgetattr(fd, &tio) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw BLEError(.transportUnavailable, "uart:\(path): not a serial device: \(String(cString: strerror(e)))")
        }
        cfmakeraw(&tio)
        tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        tio.c_cflag &= ~tcflag_t(CSTOPB)
        cfsetispeed(&tio, speed)
        cfsetospeed(&tio, speed)
        guard tcsetattr(fd, TCSANOW, &tio) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw BLEError(.transportUnavailable, "uart:\(path): cannot set \(baud) baud raw with flow control: \(String(cString: strerror(e)))")
        }
        tcflush(fd, TCIOFLUSH)
        return fd
    }

    // MARK: I/O

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], name: String) throws(BLEError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                let e = errno
                if e == EINTR { continue }
                if e == ENOTSOCK {
                    let w = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
                    if w < 0 {
                        if errno == EINTR || errno == EAGAIN { continue }
                        throw BLEError(.transportClosed, "\(name): write failed: \(String(cString: strerror(errno)))")
                    }
                    offset += w
                    continue
                }
                throw BLEError(.transportClosed, "\(name): write failed: \(String(cString: strerror(e)))")
            }
            offset += n
        }
    }

    /// Waits up to `timeoutMilliseconds` for input; returns -1 on timeout, 0 at end of stream,
    /// else the byte count read.
    static func readAvailable(_ fd: Int32, into buffer: inout [UInt8], timeoutMilliseconds: Int32, name: String) throws(BLEError) -> Int {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&p, 1, timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return -1 }
            throw BLEError(.transportClosed, "\(name): poll failed: \(String(cString: strerror(errno)))")
        }
        if ready == 0 { return -1 }
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        if n < 0 {
            let e = errno
            if e == EINTR || e == EAGAIN { return -1 }
            if e == ECONNRESET || e == ENOTCONN || e == EBADF { return 0 }
            throw BLEError(.transportClosed, "\(name): read failed: \(String(cString: strerror(e)))")
        }
        return n
    }

    static func shutdown(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    // MARK: Virtual controllers (loopback ports, child processes)

    /// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it back).
    static func freeLoopbackPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(fd) }
        var addr = loopback(port: 0)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// Whether a connect to 127.0.0.1:`port` succeeds (only where /proc/net/tcp is unreadable:
    /// the probe's close would detach a host from Bumble's one-host tcp-server).
    static func loopbackAccepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(fd) }
        var addr = loopback(port: port)
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return addr
    }

    /// SIGKILL: a child that must not linger.
    static func killHard(_ pid: Int32) {
        _ = Glibc.kill(pid, SIGKILL)
    }
}
