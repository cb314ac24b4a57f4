public import Foundation
public import KakinLedger
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore
import Synchronization

/// Slows down guessing of the server's secrets: the dashboard's keys and the API's secret keys.
///
/// Each wrong secret is counted in the ledger against the address it came from. Past the policy's
/// free attempts an address must wait, twice as long after each further failure; while it waits
/// every attempt from it is answered 429 with `Retry-After`, the right secret included, so a
/// guesser learns nothing until the wait is over. Only addresses that failed ever wait: the right
/// secret from an address without failures is always let in, however many other addresses fail.
///
/// - The dashboard's wrong keys are also counted against the dashboard account, from every
///   address together. The account itself never refuses anyone; once it is over the policy's
///   `SignInThrottlePolicy.accountAttempts` (an attack spread over many addresses), every
///   address that fails waits from its first failure instead of after its free attempts, until
///   the account's own wait is over.
/// - The dashboard's sign-in asks the ledger before it checks a key, so every server refuses a
///   waiting address.
/// - An API request presenting a key asks this server's memory, filled from the ledger each time
///   this server counts a failure, and only when memory says the address waits does it ask the
///   ledger to confirm (an operator may have cleared the wait): the key check of everyone else
///   stays free of database reads, and another server learns of a wait at its first failure from
///   that address. An app's publishable key is
///   never refused (it ships inside the app, so nothing is guessed, and users behind one address
///   would otherwise pay for somebody else's mistakes).
/// - A wrong API key names no account (the key is what identifies one), so API keys are counted
///   per address only.
///
/// Operators list and clear waits with `kakin server lockouts` and `kakin server unlock`.
public final class SignInThrottle: Sendable {
    /// What counts a failure, and how long each waits.
    public let policy: SignInThrottlePolicy
    /// Where failures are counted: the ledger every server shares (the dashboard keeps its
    /// sessions there too).
    public let ledger: any SessionLedger
    let metrics: ServerMetrics
    let logger: Logger
    let now: @Sendable () -> Date
    /// Waits this server learned from the ledger, by subject.
    private let learned = Mutex<[SignInSubject: Date]>([:])
    /// Beyond this many subjects in memory, waits that ended are dropped.
    private static let learnedLimit = 10_000

    /// What was being signed in to, for metrics and logs.
    public enum Kind: String, Sendable {
        /// The dashboard's sign-in form.
        case dashboard
        /// A key presented to the HTTP API.
        case api
    }

    /// Creates a throttle whose counts `ledger` keeps, so that every server sharing the ledger
    /// refuses the same subjects. `now` is the clock of waits and failures.
    public init(
        ledger: any SessionLedger, policy: SignInThrottlePolicy = SignInThrottlePolicy(),
        metrics: ServerMetrics = ServerMetrics(), logger: Logger = KakinServerHTTP.quietLogger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ledger = ledger
        self.policy = policy
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    /// A throttle whose counts the ledger of `service` keeps (its ``PurchaseService/sessions``).
    public convenience init(
        service: PurchaseService, policy: SignInThrottlePolicy = SignInThrottlePolicy(),
        metrics: ServerMetrics = ServerMetrics(), logger: Logger = KakinServerHTTP.quietLogger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(ledger: service.sessions, policy: policy, metrics: metrics, logger: logger, now: now)
    }

    /// Until when one of `subjects` must wait, as the ledger says now (`nil`: none waits). Ask it
    /// of addresses: an account's wait only says that its addresses get no free attempts.
    public func lockedUntil(_ subjects: [SignInSubject]) async throws -> Date? {
        let until = try await ledger.signInLockedUntil(subjects, now: now())
        if let until {
            learn(subjects, until: until)
        } else {
            learned.withLock { known in for subject in subjects { known[subject] = nil } }
        }
        return until
    }

    /// Until when one of `subjects` must wait, as far as this server learned (no database read).
    public func learnedLockedUntil(_ subjects: [SignInSubject]) -> Date? {
        let current = now()
        return learned.withLock { known in
            var latest: Date?
            for subject in subjects {
                guard let until = known[subject] else { continue }
                if until <= current {
                    known[subject] = nil
                } else if latest.map({ until > $0 }) ?? true {
                    latest = until
                }
            }
            return latest
        }
    }

    /// Counts a wrong secret against each of `subjects`: the addresses (`.source`) and the accounts
    /// (`.account`) it tried. Returns until when one of the addresses must wait now (`nil`: none).
    /// An account never waits itself; while one of `subjects`' accounts is over its free attempts,
    /// the addresses wait from their first failure. Logged, and counted in
    /// `kakin_sign_in_failures_total`. When the ledger cannot be written the failure is logged
    /// and not counted.
    @discardableResult
    public func failed(_ subjects: [SignInSubject], kind: Kind) async -> Date? {
        metrics.signInFailure(kind: kind.rawValue)
        let current = now()
        var latest: Date?
        var counts: [String] = []
        var attacked = false
        // Accounts first: whether one of them is under attack decides how the addresses are counted.
        let accounts = subjects.filter { if case .account = $0 { true } else { false } }
        for subject in accounts + subjects.filter({ !accounts.contains($0) }) {
            do {
                let isAccount = accounts.contains(subject)
                let count = try await ledger.recordSignInFailure(
                    subject, policy: attacked && !isAccount ? policy.withoutFreeSourceAttempts : policy, now: current)
                counts.append("\(subject.key)=\(count.failures)")
                if isAccount {
                    attacked = attacked || count.lockedUntil > current
                } else if count.lockedUntil > current {
                    learn([subject], until: count.lockedUntil)
                    if latest.map({ count.lockedUntil > $0 }) ?? true { latest = count.lockedUntil }
                }
            } catch {
                logger.error(
                    "a failed sign-in could not be counted", metadata: ["subject": "\(subject)", "error": "\(error)"])
            }
        }
        var metadata: Logger.Metadata = ["kind": "\(kind.rawValue)", "failures": "\(counts.joined(separator: " "))"]
        if attacked { metadata["account_under_attack"] = "true" }
        if let latest { metadata["wait_seconds"] = "\(Self.seconds(until: latest, from: current))" }
        logger.warning("sign-in failed", metadata: metadata)
        return latest
    }

    /// An attempt refused because its subject waits: counted in `kakin_sign_in_refused_total`
    /// and logged. Returns the error to answer with (429, `Retry-After`).
    public func refused(_ subjects: [SignInSubject], kind: Kind, until: Date) -> ServerError {
        metrics.signInRefused(kind: kind.rawValue)
        let wait = Self.seconds(until: until, from: now())
        logger.warning(
            "sign-in refused: too many failures",
            metadata: [
                "kind": "\(kind.rawValue)", "subjects": "\(subjects.map(\.key).joined(separator: " "))",
                "wait_seconds": "\(wait)",
            ])
        return ServerError.tooManyAttempts(retryAfter: wait)
    }

    /// A right secret from `source`: its failures are forgotten.
    public func succeeded(source: SignInSubject) async {
        learned.withLock { $0[source] = nil }
        do { try await ledger.clearSignInFailures(source) } catch {
            logger.error("failed sign-ins could not be cleared", metadata: ["subject": "\(source)", "error": "\(error)"])
        }
    }

    /// The address a request came from, as a subject: the peer's address, or, when the policy
    /// trusts the proxy in front, the last entry of `X-Forwarded-For`. An IPv6 address counts as
    /// its /64 network. `unknown` when there is no address (in-process tests).
    public func source(of request: Request, peer: SocketAddress?) -> SignInSubject {
        if policy.trustForwardedFor,
            let forwarded = request.headers[values: HTTPField.Name("X-Forwarded-For")!].last?
                .split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
            !forwarded.isEmpty
        {
            return .source(Self.network(of: forwarded))
        }
        guard let address = peer?.ipAddress else { return .source("unknown") }
        return .source(Self.network(of: address))
    }

    /// An IPv4 address as it is; an IPv6 address as its /64 network (`2001:db8:1:2::/64`); an
    /// IPv4 address mapped into IPv6 as the IPv4 address.
    static func network(of address: String) -> String {
        guard address.contains(":"), let parsed = try? SocketAddress(ipAddress: address, port: 0),
            case .v6(let v6) = parsed
        else { return address }
        let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    private func learn(_ subjects: [SignInSubject], until: Date) {
        let current = now()
        learned.withLock { known in
            if known.count >= Self.learnedLimit { known = known.filter { $0.value > current } }
            for subject in subjects where known.count < Self.learnedLimit {
                if known[subject].map({ until > $0 }) ?? true { known[subject] = until }
            }
        }
    }

    /// Whole seconds from `start` to `end`, at least 1.
    static func seconds(until end: Date, from start: Date) -> Int {
        max(1, Int(end.timeIntervalSince(start).rounded(.up)))
    }
}
