import ByteCore

/// Characteristic properties (Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
}

/// A characteristic to put in the database.
public struct CharacteristicDefinition {
    public var uuid: BLEUUID
    public var properties: CharacteristicProperties
    public var value: [UInt8]
    /// Called with each accepted write (the database keeps the value too).
    public var onWrite: (([UInt8]) -> Void)?

    public init(uuid: BLEUUID, properties: CharacteristicProperties, value: [UInt8] = [], onWrite: (([UInt8]) -> Void)? = nil) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.onWrite = onWrite
    }
}

/// A service to put in the database.
public struct ServiceDefinition {
    public var uuid: BLEUUID
    public var characteristics: [CharacteristicDefinition]
    public init(uuid: BLEUUID, characteristics: [CharacteristicDefinition]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// One attribute (Core Vol 3 Part F §3.2).
public struct Attribute {
    public enum Kind { case serviceDeclaration, characteristicDeclaration, value, cccd }
    public let handle: UInt16
    public let type: BLEUUID
    public let kind: Kind
    public var value: [UInt8]
    public let readable: Bool
    public let writable: Bool
    /// Last handle of the group (services only).
    public var groupEnd: UInt16
    /// The characteristic value handle a CCCD configures.
    public var valueHandle: UInt16
    let onWrite: (([UInt8]) -> Void)?
}

/// The server's attribute table, built once from service definitions (handles from 1).
public final class GATTDatabase {
    public private(set) var attributes: [Attribute] = []

    public init(services: [ServiceDefinition]) {
        var handle: UInt16 = 1
        for service in services {
            let serviceIndex = attributes.count
            attributes.append(Attribute(handle: handle, type: GATTUUID.primaryService, kind: .serviceDeclaration, value: service.uuid.bytes,
                                        readable: true, writable: false, groupEnd: handle, valueHandle: 0, onWrite: nil))
            handle += 1
            for c in service.characteristics {
                let valueHandle = handle + 1
                var decl: [UInt8] = [c.properties.rawValue]
                decl.appendUInt16LE(valueHandle)
                decl += c.uuid.bytes
                attributes.append(Attribute(handle: handle, type: GATTUUID.characteristic, kind: .characteristicDeclaration, value: decl,
                                            readable: true, writable: false, groupEnd: 0, valueHandle: valueHandle, onWrite: nil))
                attributes.append(Attribute(handle: valueHandle, type: c.uuid, kind: .value, value: c.value,
                                            readable: c.properties.contains(.read),
                                            writable: !c.properties.intersection([.write, .writeWithoutResponse]).isEmpty,
                                            groupEnd: 0, valueHandle: valueHandle, onWrite: c.onWrite))
                handle += 2
                if !c.properties.intersection([.notify, .indicate]).isEmpty {
                    attributes.append(Attribute(handle: handle, type: GATTUUID.clientCharacteristicConfiguration, kind: .cccd, value: [0, 0],
                                                readable: true, writable: true, groupEnd: 0, valueHandle: valueHandle, onWrite: nil))
                    handle += 1
                }
            }
            attributes[serviceIndex].groupEnd = handle - 1
        }
    }

    public func attribute(_ handle: UInt16) -> Attribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    func setValue(_ handle: UInt16, _ value: [UInt8]) {
        guard handle >= 1, Int(handle) <= attributes.count else { return }
        attributes[Int(handle) - 1].value = value
    }

    /// The value handle of the first characteristic with `uuid`.
    public func valueHandle(of uuid: BLEUUID) -> UInt16? {
        attributes.first { $0.kind == .value && $0.type == uuid }?.handle
    }

    /// GAP (device name, appearance) and GATT (service changed, indicate) services, first.
    public static func standardServices(deviceName: String, appearance: UInt16 = 0x0000) -> [ServiceDefinition] {
        var app = [UInt8]()
        app.appendUInt16LE(appearance)
        return [
            ServiceDefinition(uuid: GATTUUID.genericAccess, characteristics: [
                CharacteristicDefinition(uuid: GATTUUID.deviceName, properties: .read, value: Array(deviceName.utf8)),
                CharacteristicDefinition(uuid: GATTUUID.appearance, properties: .read, value: app),
            ]),
            ServiceDefinition(uuid: GATTUUID.genericAttribute, characteristics: [
                CharacteristicDefinition(uuid: GATTUUID.serviceChanged, properties: .indicate, value: [0x01, 0x00, 0xFF, 0xFF]),
            ]),
        ]
    }
}
