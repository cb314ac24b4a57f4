import Foundation
import Synchronization

/// The digests of the signed transactions a SQLite ledger holds, kept in memory (their first 8
/// bytes), so that an upload the ledger has certainly never seen skips the indexed read that
/// looks for the same bytes: almost every upload is new, and that read starts cold on a reader
/// connection after each commit.
///
/// Only a "certainly not stored" answer is acted on, so the set may hold more than the ledger
/// (a digest is added when its row is written, before the commit, and stays if the commit fails)
/// but never less once it is loaded: it is loaded on the writer, where no row can be written
/// meanwhile, and until then every answer is "maybe". A row written by another process that
/// opened the same file is not in it; that upload then takes the full path (verify, then the
/// insert's conflict check), which gives the same answer more slowly. Past ``capacity`` digests
/// the set gives up and answers "maybe" from then on, to bound its memory (about 20 MB).
final class SignedDigestSet: Sendable {
    static let capacity = 2_000_000

    private enum State {
        case unknown
        case known(Set<UInt64>)
        case abandoned
    }

    private let state = Mutex(State.unknown)
    private let capacityLimit: Int

    init(capacity: Int = SignedDigestSet.capacity) {
        capacityLimit = capacity
    }

    /// Whether the ledger may hold `digest`: `false` only when it certainly does not.
    func mayContain(_ digest: Data) -> Bool {
        guard let key = Self.key(digest) else { return true }
        return state.withLock { state in
            guard case .known(let keys) = state else { return true }
            return keys.contains(key)
        }
    }

    /// Records that the ledger holds (or is about to hold) `digest`.
    func insert(_ digest: Data) {
        guard let key = Self.key(digest) else { return }
        let limit = capacityLimit
        state.withLock { state in
            guard case .known(var keys) = state else { return }
            state = .abandoned  // releases the set's storage, so the insert does not copy it
            guard keys.count < limit else { return }
            keys.insert(key)
            state = .known(keys)
        }
    }

    /// Starts answering from `count` digests read by `read`, which hands each to its closure; run
    /// where no row can be written meanwhile. Gives up instead when `count` exceeds the capacity.
    func load(count: Int, _ read: ((Data) -> Void) throws -> Void) rethrows {
        guard count <= capacityLimit else {
            state.withLock { $0 = .abandoned }
            return
        }
        var keys = Set<UInt64>(minimumCapacity: count)
        try read { digest in
            if let key = Self.key(digest) { keys.insert(key) }
        }
        state.withLock { $0 = .known(keys) }
    }

    /// Whether the set answers (loaded and not given up): for tests.
    var isLoaded: Bool {
        state.withLock { state in
            if case .known = state { return true }
            return false
        }
    }

    private static func key(_ digest: Data) -> UInt64? {
        guard digest.count >= 8 else { return nil }
        return digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}
