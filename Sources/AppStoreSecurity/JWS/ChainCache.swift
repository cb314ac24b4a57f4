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
    private let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    subscript(key: String) -> Entry? {
        get { lock.withLock { entries[key] } }
        set {
            lock.withLock {
                if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
                entries[key] = newValue
            }
        }
    }
}
