/// A value from one of Apple's enumerations, kept as the raw value Apple sent.
///
/// Apple adds notification types, offer types and error codes over time. A Swift `enum` would
/// refuse to decode a value it does not know and lose the whole payload; a `WireEnum` is a struct
/// that stores the raw value and offers the known ones as static members, so an unknown value
/// survives decoding, compares, encodes back unchanged, and can be recognised with ``isKnown``.
///
/// ```swift
/// public struct ProductType: WireEnum {
///     public let rawValue: String
///     public init(rawValue: String) { self.rawValue = rawValue }
///     public static let consumable = Self(rawValue: "Consumable")
///     public static let knownValues: [Self] = [.consumable]
/// }
/// ```
public protocol WireEnum: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible
where RawValue: Codable & Hashable & Sendable {
    /// Creates a value from any raw value, known or not.
    init(rawValue: RawValue)
    /// The values this version of the package knows by name.
    static var knownValues: [Self] { get }
}

extension WireEnum {
    /// Whether this value is one this version of the package knows by name.
    public var isKnown: Bool { Self.knownValues.contains(self) }

    public var description: String { "\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(rawValue: try container.decode(RawValue.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension WireEnum where RawValue == String {
    /// Creates a value from a string literal, so known and unknown values read the same way.
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
}
