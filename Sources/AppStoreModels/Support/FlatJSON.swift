/// A type that can read itself from the common shape of its JSON faster than `JSONDecoder`.
///
/// The fast reader takes a strict subset of JSON: one object whose values are strings without
/// escapes, integers without fraction or exponent, `true`, `false` or `null`. For anything else
/// (a nested value, an escape, a number it would have to round, a key given twice, bytes that
/// are not JSON) it answers `nil`, and the caller decodes with `JSONDecoder`, which then either
/// reads the value or explains what is wrong. Whatever the fast reader accepts, it reads to the
/// value `JSONDecoder` would.
public protocol FlatJSONDecodable: Decodable {
    /// The value, or `nil` when `bytes` are outside the subset the fast reader takes.
    init?(flatJSON bytes: UnsafeRawBufferPointer)
}

/// One value of a flat JSON object.
public enum FlatJSONValue: Sendable, Hashable {
    /// A string, which had no escapes.
    case string(String)
    /// An integer, which had no fraction or exponent.
    case integer(Int64)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
}

/// Reads a flat JSON object member by member; see ``FlatJSONDecodable`` for the subset.
public struct FlatJSONScanner: ~Copyable {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var opened = false
    private var finished = false

    /// Creates a scanner over the JSON text in `bytes`, which must stay valid while it is used.
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// What ``next()`` found.
    public enum Step {
        /// A member.
        case member(key: String, value: FlatJSONValue)
        /// The object ended, and nothing but whitespace follows it.
        case end
        /// The bytes are outside the subset (or not JSON at all).
        case declined
    }

    /// The next member of the object.
    public mutating func next() -> Step {
        guard !finished else { return .declined }
        skipSpace()
        if !opened {
            guard take(UInt8(ascii: "{")) else { return decline() }
            opened = true
            skipSpace()
            if take(UInt8(ascii: "}")) { return end() }
        } else {
            if take(UInt8(ascii: "}")) { return end() }
            guard take(UInt8(ascii: ",")) else { return decline() }
            skipSpace()
        }
        guard let key = string() else { return decline() }
        skipSpace()
        guard take(UInt8(ascii: ":")) else { return decline() }
        skipSpace()
        guard let value = value() else { return decline() }
        skipSpace()
        return .member(key: key, value: value)
    }

    private mutating func end() -> Step {
        skipSpace()
        finished = true
        return index == bytes.count ? .end : .declined
    }

    private mutating func decline() -> Step {
        finished = true
        return .declined
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func value() -> FlatJSONValue? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(FlatJSONValue.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(FlatJSONValue.integer)
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// A string without escapes or control characters, valid UTF-8.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }

    /// An integer as JSON writes it (no leading zeros), without fraction or exponent, that fits.
    private mutating func integer() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        // A fraction or an exponent is left to the full decoder.
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}

extension FlatJSONValue {
    /// The string, `.some(nil)` for `null`, `nil` for another kind of value.
    public var string: String?? {
        switch self {
        case .string(let text): .some(text)
        case .null: .some(nil)
        default: nil
        }
    }

    /// The integer, `.some(nil)` for `null`, `nil` for another kind of value.
    public var integer: Int64?? {
        switch self {
        case .integer(let number): .some(number)
        case .null: .some(nil)
        default: nil
        }
    }

    /// The integer as an `Int`, `.some(nil)` for `null`, `nil` for another kind of value.
    public var int: Int?? {
        switch self {
        case .integer(let number): Int(exactly: number).map { .some($0) }
        case .null: .some(nil)
        default: nil
        }
    }

    /// The boolean, `.some(nil)` for `null`, `nil` for another kind of value.
    public var bool: Bool?? {
        switch self {
        case .bool(let value): .some(value)
        case .null: .some(nil)
        default: nil
        }
    }
}
