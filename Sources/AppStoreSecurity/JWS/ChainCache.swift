import Crypto
import Foundation
import Synchronization
import X509

/// Verified chains by JWS header segment (so by the exact bytes of the certificates), behind a
/// `Mutex` because the lookup is a synchronous step of a hot path.
final class ChainCache: Sendable {
    struct Entry: Sendable {
        let header: JWSHeader
        let key: P256.Signing.PublicKey
        /// When all certificates are valid; `nil` for Xcode's self-signed certificate.
        let window: ClosedRange<Date>?
        let certificates: [Certificate]
        /// The trusted root the chain leads to; `nil` for Xcode's self-signed certificate.
        let root: Certificate?
        /// Until when the revocation check's verdict holds; `nil` when revocation is not checked.
        let revocationCheckedUntil: Date?

        var isXcodeSigned: Bool { window == nil }

        /// Whether this entry can vouch for the chain at `time` without checking it again.
        func holds(at time: Date) -> Bool {
            isXcodeSigned || (isValid(at: time) && revocationCheckedUntil.map { time < $0 } ?? true)
        }

        /// Whether every certificate of the chain is valid at `time`.
        func isValid(at time: Date) -> Bool { isXcodeSigned || window?.contains(time) == true }

        /// This entry with its revocation verdict renewed until `until`.
        func revocationChecked(until: Date) -> Entry {
            Entry(
                header: header, key: key, window: window, certificates: certificates, root: root,
                revocationCheckedUntil: until)
        }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The entry used last: a stream of transactions is normally signed by one leaf, so one
        /// byte comparison usually replaces hashing a 3 KB header.
        var last: (key: String, entry: Entry)?
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// The entry for an encoded JWS header, if its chain was verified before.
    func entry(forHeader header: Substring) -> Entry? {
        state.withLock { state in
            if let last = state.last, Self.sameBytes(last.key, header) { return last.entry }
            let key = String(header)
            guard let entry = state.entries[key] else { return nil }
            state.last = (key, entry)
            return entry
        }
    }

    private static func sameBytes(_ key: String, _ header: Substring) -> Bool {
        var key = key
        var header = header
        return key.withUTF8 { left in
            header.withUTF8 { right in
                guard left.count == right.count, let leftBase = left.baseAddress, let rightBase = right.baseAddress
                else {
                    return left.count == right.count
                }
                return memcmp(leftBase, rightBase, left.count) == 0
            }
        }
    }

    /// Records a verified chain for an encoded JWS header.
    func store(_ entry: Entry, forHeader header: Substring) {
        let key = String(header)
        let capacity = self.capacity
        state.withLock { state in
            if state.entries.count >= capacity, state.entries[key] == nil {
                state.entries.removeAll(keepingCapacity: true)
            }
            state.entries[key] = entry
            state.last = (key, entry)
        }
    }
}
