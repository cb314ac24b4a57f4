import Crypto
import Foundation
import X509

/// Verified chains by JWS header segment. A lock box because verification is a synchronous hot path.
final class ChainCache: @unchecked Sendable {
    struct Entry: Sendable {
        let header: JWSHeader
        let key: P256.Signing.PublicKey
        /// When all certificates are valid; `nil` for Xcode's self-signed certificate.
        let window: ClosedRange<Date>?
        let certificates: [Certificate]

        var isXcodeSigned: Bool { window == nil }
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// The entry used last: a stream of transactions is normally signed by one leaf, so one byte
    /// comparison usually replaces hashing a 3 KB header.
    private var last: (key: String, entry: Entry)?
    private let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// The entry for an encoded JWS header, if its chain was verified before.
    func entry(forHeader header: Substring) -> Entry? {
        lock.withLock {
            if let last, Self.sameBytes(last.key, header) { return last.entry }
            let key = String(header)
            guard let entry = entries[key] else { return nil }
            last = (key, entry)
            return entry
        }
    }

    private static func sameBytes(_ key: String, _ header: Substring) -> Bool {
        var key = key
        var header = header
        return key.withUTF8 { left in
            header.withUTF8 { right in
                left.count == right.count
                    && (left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    /// Records a verified chain for an encoded JWS header.
    func store(_ entry: Entry, forHeader header: Substring) {
        let key = String(header)
        lock.withLock {
            if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
            last = (key, entry)
        }
    }
}
