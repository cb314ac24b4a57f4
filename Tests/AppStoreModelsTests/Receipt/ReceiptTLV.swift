import Foundation

/// A tiny hand-written DER writer, independent of the library, for building payloads the way
/// Apple writes them (unsorted, other versions, empty strings, PrintableString).
enum ReceiptTLV {
    static func encode(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var count = content.count
            var bytes: [UInt8] = []
            while count > 0 {
                bytes.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + content
    }

    static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while bytes.count > 1,
            (bytes[0] == 0x00 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0)
        {
            bytes.removeFirst()
        }
        return encode(0x02, bytes)
    }

    static func utf8(_ text: String) -> [UInt8] { encode(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { encode(0x16, Array(text.utf8)) }
    static func printable(_ text: String) -> [UInt8] { encode(0x13, Array(text.utf8)) }

    static func attribute(_ type: Int, version: Int64 = 1, _ value: [UInt8]) -> [UInt8] {
        encode(0x30, integer(Int64(type)) + integer(version) + encode(0x04, value))
    }

    static func set(_ elements: [[UInt8]]) -> [UInt8] {
        encode(0x31, elements.flatMap { $0 })
    }

    /// The same set with an indefinite length, which only BER allows.
    static func indefiniteSet(_ elements: [[UInt8]]) -> [UInt8] {
        [0x31, 0x80] + elements.flatMap { $0 } + [0x00, 0x00]
    }
}
