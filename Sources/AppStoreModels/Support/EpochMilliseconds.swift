public import Foundation

/// A date that Apple sends as milliseconds since 1970-01-01T00:00:00Z.
///
/// Every JSON date in Apple's signed payloads and App Store Server API bodies is a number of
/// milliseconds. Xcode's StoreKit testing writes fractional milliseconds (`1697679936049.7297`) and
/// dates before 1970 (`-62135769600000`), so both are accepted. Whole milliseconds encode back as
/// integers, so a decoded payload re-encodes to the same numbers.
///
/// The wrapper makes a `Date?` property decode and encode this way regardless of the
/// `JSONDecoder.dateDecodingStrategy` in use; a missing key or `null` decodes as `nil`, and `nil`
/// is left out when encoding.
@propertyWrapper
public struct EpochMilliseconds: Codable, Hashable, Sendable {
    /// The date; `nil` when the key was missing or `null`.
    public var wrappedValue: Date?

    /// Wraps a date.
    public init(wrappedValue: Date?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else if let whole = try? container.decode(Int64.self) {
            wrappedValue = Date(epochMilliseconds: whole)
        } else {
            let value = try container.decode(Double.self)
            guard value.isFinite else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "A date must be a finite number of milliseconds; found \(value)")
            }
            wrappedValue = Date(timeIntervalSince1970: value / 1000)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        guard let date = wrappedValue else {
            try container.encodeNil()
            return
        }
        let milliseconds = date.timeIntervalSince1970 * 1000
        let rounded = milliseconds.rounded()
        if abs(milliseconds - rounded) < 0.0005, abs(rounded) < 9.0e15 {
            try container.encode(Int64(rounded))
        } else {
            try container.encode(milliseconds)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as a `nil` date rather than an error.
    public func decode(_ type: EpochMilliseconds.Type, forKey key: Key) throws -> EpochMilliseconds {
        try decodeIfPresent(type, forKey: key) ?? EpochMilliseconds(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    /// A `nil` date is left out, as Apple leaves out absent fields.
    public mutating func encode(_ value: EpochMilliseconds, forKey key: Key) throws {
        if value.wrappedValue != nil {
            try encodeIfPresent(value, forKey: key)
        }
    }
}

extension Date {
    /// The date `milliseconds` after 1970-01-01T00:00:00Z, the unit of every Apple JSON date.
    public init(epochMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded to the nearest.
    public var epochMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }
}
