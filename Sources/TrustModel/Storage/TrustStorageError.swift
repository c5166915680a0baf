import Foundation

/// The error a store raises for data it cannot read back (a damaged or foreign file).
public struct TrustStorageError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
