public import Foundation

/// Who a failed sign-in counts against: the address it came from, or the account it tried.
public enum SignInSubject: Hashable, Sendable, CustomStringConvertible {
    /// A client address (an IPv6 address counts as its /64 network, which one client usually holds whole).
    case source(String)
    /// An account: `dashboard` for the dashboard's sign-in form.
    case account(String)

    /// The account the dashboard's sign-in form signs in to.
    public static let dashboard = SignInSubject.account("dashboard")

    /// How the ledger stores it: `source:ADDRESS` or `account:NAME`.
    public var key: String {
        switch self {
        case .source(let address): "source:\(address)"
        case .account(let name): "account:\(name)"
        }
    }

    /// The subject stored as `key`, or `nil` when `key` is not one.
    public init?(key: String) {
        if key.hasPrefix("source:"), key.count > 7 {
            self = .source(String(key.dropFirst(7)))
        } else if key.hasPrefix("account:"), key.count > 8 {
            self = .account(String(key.dropFirst(8)))
        } else {
            return nil
        }
    }

    public var description: String { key }
}

/// A subject's failures as the ledger counts them.
public struct SignInFailureCount: Hashable, Sendable {
    /// The address or account counted.
    public var subject: SignInSubject
    /// Failures since the subject was last quiet for the policy's window.
    public var failures: Int
    /// Until when the subject must wait (in the past when it need not).
    public var lockedUntil: Date
    /// The latest failure, when read from the ledger's list.
    public var lastFailure: Date?

    /// Creates a count from its parts.
    public init(subject: SignInSubject, failures: Int, lockedUntil: Date, lastFailure: Date? = nil) {
        self.subject = subject
        self.failures = failures
        self.lockedUntil = lockedUntil
        self.lastFailure = lastFailure
    }
}

/// How guessing a secret is slowed: after a few free failures, each further failure makes the
/// subject wait, twice as long as the failure before, up to a ceiling.
///
/// With the defaults, one address may get a dashboard key or a secret key wrong 5 times; the 6th
/// failure makes it wait 1 s, the 7th 2 s, the 8th 4 s, … up to 15 minutes per failure. The
/// dashboard account, tried from any number of addresses, gets 20 free failures; past them its
/// count waits the same way, and while it does every address that fails waits from its first
/// failure (the account's wait refuses nobody: an address that has not failed is never held up).
/// Failures are forgotten after 15 quiet minutes (no failure and no wait).
public struct SignInThrottlePolicy: Hashable, Sendable {
    /// Failures one address may make before it waits.
    public var sourceAttempts = 5
    /// Failures against one account, from every address together, after which every address that
    /// fails waits from its first failure (until the account has been quiet long enough).
    public var accountAttempts = 20
    /// The first wait; each further failure doubles it.
    public var firstWaitSeconds = 1
    /// The longest wait after one failure.
    public var maxWaitSeconds = 900
    /// How long a subject must be quiet before its failures are forgotten.
    public var windowSeconds = 900
    /// Whether the client's address is read from `X-Forwarded-For` (its last entry, which the
    /// proxy in front wrote): set it only when the server is reached through such a proxy alone.
    public var trustForwardedFor = false

    /// Creates a policy; every value defaults to the one described above.
    public init(
        sourceAttempts: Int = 5, accountAttempts: Int = 20, firstWaitSeconds: Int = 1, maxWaitSeconds: Int = 900,
        windowSeconds: Int = 900, trustForwardedFor: Bool = false
    ) {
        self.sourceAttempts = sourceAttempts
        self.accountAttempts = accountAttempts
        self.firstWaitSeconds = firstWaitSeconds
        self.maxWaitSeconds = maxWaitSeconds
        self.windowSeconds = windowSeconds
        self.trustForwardedFor = trustForwardedFor
    }

    /// The policy while an account is under attack: addresses get no free failures.
    public var withoutFreeSourceAttempts: SignInThrottlePolicy {
        var strict = self
        strict.sourceAttempts = 0
        return strict
    }

    /// How many failures `subject` may make before it waits.
    public func freeAttempts(of subject: SignInSubject) -> Int {
        switch subject {
        case .source: sourceAttempts
        case .account: accountAttempts
        }
    }

    /// The wait, in seconds, that the `failures`-th failure of `subject` imposes (0: none).
    public func waitSeconds(afterFailures failures: Int, of subject: SignInSubject) -> Int {
        let over = failures - freeAttempts(of: subject)
        guard over > 0 else { return 0 }
        let doublings = min(over - 1, 40)
        let wait = Int64(firstWaitSeconds) << Int64(doublings)
        return Int(min(wait, Int64(maxWaitSeconds)))
    }
}
