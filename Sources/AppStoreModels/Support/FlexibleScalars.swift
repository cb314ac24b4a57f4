/// An integer that Apple sends sometimes as a JSON number and sometimes as a string of digits.
///
/// The legacy verifyReceipt service is inconsistent: `adam_id` and `download_id` arrive as numbers
/// while most other numbers arrive as strings, and third-party copies of its responses mix both.
/// The wrapper accepts either spelling and always encodes a JSON number. A missing key or `null`
/// decodes as `nil`, and `nil` is left out when encoding.
@propertyWrapper
public struct FlexibleInteger: Codable, Hashable, Sendable {
    /// The integer, or `nil` when Apple left it out.
    public var wrappedValue: Int64?

    /// Wraps an integer.
    public init(wrappedValue: Int64?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else if let number = try? container.decode(Int64.self) {
            wrappedValue = number
        } else {
            let text = try container.decode(String.self)
            guard let number = Int64(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "Expected an integer or a string of digits; found \"\(text)\"")
            }
            wrappedValue = number
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}

/// A Boolean that Apple sends as `true`/`false`, as `1`/`0`, or as the strings `"true"`/`"false"`.
///
/// verifyReceipt's `is-retryable` is documented as a Boolean but has been seen as `0`/`1`. The
/// wrapper accepts every spelling and encodes a JSON Boolean. A missing key or `null` decodes as
/// `nil`, and `nil` is left out when encoding.
@propertyWrapper
public struct FlexibleBool: Codable, Hashable, Sendable {
    /// The Boolean, or `nil` when Apple left it out.
    public var wrappedValue: Bool?

    /// Wraps a Boolean.
    public init(wrappedValue: Bool?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else if let flag = try? container.decode(Bool.self) {
            wrappedValue = flag
        } else if let number = try? container.decode(Int64.self), number == 0 || number == 1 {
            wrappedValue = number == 1
        } else if let text = try? container.decode(String.self), let flag = Self.parse(text) {
            wrappedValue = flag
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Expected true, false, 1, 0, \"true\" or \"false\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }

    /// Reads `"true"`, `"false"`, `"1"` or `"0"`; anything else is `nil`.
    static func parse(_ text: String) -> Bool? {
        switch text {
        case "true", "1": true
        case "false", "0": false
        default: nil
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as `nil` rather than an error.
    public func decode(_ type: FlexibleInteger.Type, forKey key: Key) throws -> FlexibleInteger {
        try decodeIfPresent(type, forKey: key) ?? FlexibleInteger(wrappedValue: nil)
    }

    /// A missing key decodes as `nil` rather than an error.
    public func decode(_ type: FlexibleBool.Type, forKey key: Key) throws -> FlexibleBool {
        try decodeIfPresent(type, forKey: key) ?? FlexibleBool(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    /// A `nil` value is left out, as Apple leaves out absent fields.
    public mutating func encode(_ value: FlexibleInteger, forKey key: Key) throws {
        if value.wrappedValue != nil {
            try encodeIfPresent(value, forKey: key)
        }
    }

    /// A `nil` value is left out, as Apple leaves out absent fields.
    public mutating func encode(_ value: FlexibleBool, forKey key: Key) throws {
        if value.wrappedValue != nil {
            try encodeIfPresent(value, forKey: key)
        }
    }
}
