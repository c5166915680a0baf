/// What a phone asks of the bolt in a remote keyless entry request (aliro-actuator
/// `user_device.py` `RkeAction`: SECURE `00`, UNSECURE `01`; the certification tool's
/// BLERKE_RDR_SECURE / _UNSECURE send them).
public enum RemoteAction: UInt8, Sendable, CaseIterable, Codable {
    case secure = 0x00
    case unsecure = 0x01

    public var name: String { self == .secure ? "secure" : "unsecure" }

    public init?(name: String) {
        guard let a = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = a
    }
}
