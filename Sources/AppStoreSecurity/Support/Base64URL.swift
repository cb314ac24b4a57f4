import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
enum Base64URL {
    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// Decodes base64url; also tolerates padding. Returns `nil` for any other character.
    static func decode<S: StringProtocol>(_ text: S) -> Data? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            default: bytes.append(byte)
            }
        }
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        switch bytes.count % 4 {
        case 1: return nil
        case 2: bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "=")])
        case 3: bytes.append(UInt8(ascii: "="))
        default: break
        }
        return Data(base64Encoded: Data(bytes))
    }
}
