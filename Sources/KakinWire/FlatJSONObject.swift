/// A fast reader for the simplest JSON request bodies: one object whose values are all strings
/// without escapes, such as `{"bundleId":"…","appUserId":"…","signedTransaction":"<JWS>"}`.
///
/// It accepts a strict subset of JSON and answers `nil` for anything else (another kind of value,
/// an escape sequence, a repeated key, a control character, invalid UTF-8, trailing bytes), so the
/// caller falls back to `JSONDecoder`, which then decodes it or explains what is wrong. Whatever it
/// does accept, `JSONDecoder` reads to the same strings.
public enum FlatJSONObject {
    /// The object's keys and values, or `nil` when the bytes are not in the subset this reads.
    public static func strings(_ bytes: some Collection<UInt8>) -> [String: String]? {
        let result = bytes.withContiguousStorageIfAvailable { parse($0) }
        return result ?? parse(Array(bytes).withUnsafeBufferPointer { $0 })
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
        func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var end = start
            // Eight bytes at a time while none of them ends the string or needs a closer look
            // (a JWS is thousands of base64url characters).
            while end + 8 <= bytes.count, !needsCloserLook(UnsafeRawPointer(bytes.baseAddress! + end).loadUnaligned(as: UInt64.self)) {
                end += 8
            }
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") { break }
                // Escapes and control characters are left to the full decoder.
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            index = end + 1
            return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        var object: [String: String] = [:]
        object.reserveCapacity(4)
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpace()
                guard let value = string(), object.updateValue(value, forKey: key) == nil else { return nil }
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
                skipSpace()
            }
        }
        skipSpace()
        return index == bytes.count ? object : nil
    }
}

extension FlatJSONObject {
    /// Whether any of eight bytes is a quote, a backslash or a control character (below 0x20),
    /// tested on all eight at once: a byte is zero after the exclusive or with the byte sought
    /// exactly when it was that byte, and `(x - 0x01…) & ~x & 0x80…` flags the bytes of `x` that
    /// are zero; `(x - 0x20…) & ~x & 0x80…` flags those below 0x20.
    @inline(__always)
    static func needsCloserLook(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quote = zeroByte(word ^ (ones &* 0x22))
        let backslash = zeroByte(word ^ (ones &* 0x5C))
        let control = (word &- ones &* 0x20) & ~word & highs
        return (quote | backslash | control) != 0
    }
}

extension TransactionSubmission {
    /// Reads the body through ``FlatJSONObject``: `nil` when it is not in that subset or lacks a
    /// field, and then `JSONDecoder` is the one to read it (or to say what is wrong).
    public init?(flatJSON bytes: some Collection<UInt8>) {
        guard let fields = FlatJSONObject.strings(bytes), let bundleId = fields["bundleId"],
            let appUserId = fields["appUserId"], let signedTransaction = fields["signedTransaction"]
        else { return nil }
        self.init(
            bundleId: bundleId, appUserId: appUserId, signedTransaction: signedTransaction,
            signedAppTransaction: fields["signedAppTransaction"])
    }
}
