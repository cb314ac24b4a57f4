/// Writes JSON straight into bytes, exactly as a `JSONEncoder` with sorted keys and unescaped
/// slashes (the API's encoder, `KakinJSON.encoder()`) would write the same value: no spaces, keys in
/// sorted order (the caller writes them in that order), slashes unescaped, control characters
/// escaped, everything else as UTF-8.
///
/// The server answers every purchase with a signed customer answer, and the ledger writes an event
/// with every purchase; writing them here instead of through `JSONEncoder` skips building an
/// intermediate tree of boxed values for each. Tests compare both encoders' bytes over many values.
public struct JSONOutput: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next key or array element needs a comma before it.
    private var needsComma = false

    /// An empty output, with room for `capacity` bytes.
    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    // MARK: Structure

    /// Writes an object: `body` writes its fields, in sorted key order.
    public mutating func object(_ body: (inout JSONOutput) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes an array of `elements`, each written by `element`.
    public mutating func array<C: Collection>(_ elements: C, _ element: (inout JSONOutput, C.Element) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for item in elements { element(&self, item) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes a key; the next write is its value.
    public mutating func key(_ name: String) {
        separate()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes a string, escaped.
    public mutating func string(_ value: String) {
        separate()
        writeString(value)
        needsComma = true
    }

    /// Writes an integer.
    public mutating func integer<I: BinaryInteger>(_ value: I) {
        separate()
        writeInteger(Int64(value))
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        needsComma = true
    }

    // MARK: Fields

    /// Writes `"name":"value"`; nothing when `value` is `nil` (as `encodeIfPresent` does).
    public mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Writes `"name":value`; nothing when `value` is `nil`.
    public mutating func field<I: BinaryInteger>(_ name: String, _ value: I?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    /// Writes `"name":true` or `"name":false`; nothing when `value` is `nil`.
    public mutating func field(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bool(value)
    }

    /// Writes a string-to-integer map as an object, keys sorted as `JSONEncoder` sorts them.
    public mutating func field<I: BinaryInteger>(_ name: String, _ map: [String: I]) {
        key(name)
        object { output in
            for (key, value) in map.sorted(by: { $0.key < $1.key }) {
                output.key(key)
                output.integer(value)
            }
        }
    }

    // MARK: Bytes

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }

    private mutating func writeInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
}
