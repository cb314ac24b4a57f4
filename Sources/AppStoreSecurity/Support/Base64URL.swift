import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
enum Base64URL {
    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// The 6-bit value of each base64url character; 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// Decodes base64url; trailing `=` padding is tolerated. Returns `nil` for any other character
    /// (standard base64's `+` and `/` included) or an impossible length.
    ///
    /// A table-driven decoder: every verification decodes a payload and a signature, so this sits
    /// on the hot path.
    static func decode(_ text: String) -> Data? {
        decode(Substring(text))
    }

    /// Decodes a base64url segment of a larger string without copying it.
    static func decode(_ text: Substring) -> Data? {
        var text = text
        return values.withUnsafeBufferPointer { values in
            text.withUTF8 { input -> Data? in
                var count = input.count
                while count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
                if count % 4 == 1 { return nil }
                var output = Data(count: count * 3 / 4)
                let valid = output.withUnsafeMutableBytes { raw -> Bool in
                    let out = raw.bindMemory(to: UInt8.self)
                    var accumulator: UInt32 = 0
                    var bits = 0
                    var written = 0
                    for index in 0..<count {
                        let value = values[Int(input[index])]
                        if value == 0xFF { return false }
                        accumulator = (accumulator << 6) | UInt32(value)
                        bits += 6
                        if bits >= 8 {
                            bits -= 8
                            out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                            written += 1
                        }
                    }
                    return written == out.count
                }
                return valid ? output : nil
            }
        }
    }
}
