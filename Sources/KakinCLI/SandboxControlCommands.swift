import ArgumentParser
import Foundation

/// A `kakin sandbox` subcommand that makes one control API call to a running sandbox.
protocol SandboxControlCommand: AsyncParsableCommand, OutputProducingCommand {
    var connection: SandboxConnectionOptions { get }
}

extension SandboxControlCommand {
    func run() async throws { try await emit() }
}

/// `kakin sandbox refund TRANSACTION_ID [--reason N] [--percentage P]`
struct SandboxRefundCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "refund", abstract: "Refund a transaction, in full or in part (REFUND is sent to the server).")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The transaction's ID.") var transactionID: String
    @Option(help: "The revocation reason: 0 (other) or 1 (a problem in the app).") var reason: Int = 0
    @Option(
        help: """
            The refunded share in percent, above 0 and up to 100, with at most three decimals \
            (50 or 67.932): a prorated refund below 100, a full refund by default.
            """)
    var percentage: String?

    func validate() throws {
        guard [0, 1].contains(reason) else { throw ValidationError("--reason must be 0 or 1; found \(reason)") }
        if let percentage, Self.milliunits(percentage) == nil {
            throw ValidationError(
                "--percentage must be a number above 0 and up to 100 with at most three decimals; found \(percentage)")
        }
    }

    /// A percentage written as text (`50`, `67.932`) in milliunits of a percent (50000, 67932), as
    /// Apple's `revocationPercentage` counts; `nil` when it is not a number in (0, 100] with at most
    /// three decimals.
    static func milliunits(_ text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty, whole.count <= 3,
            whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }),
            parts.count == 1 || !fraction.isEmpty
        else { return nil }
        fraction += String(repeating: "0", count: 3 - fraction.count)
        guard let units = Int(whole), let thousandths = Int(fraction) else { return nil }
        let value = units * 1000 + thousandths
        return (1...100_000).contains(value) ? value : nil
    }

    func produceOutput() async -> CommandOutput {
        var body: [String: Int] = ["reason": reason]
        if let percentage, let share = Self.milliunits(percentage) { body["percentage"] = share }
        return await connection.client.send(
            "POST", ["transactions", transactionID, "refund"], body: body, done: "refunded")
    }
}

/// `kakin sandbox revoke TRANSACTION_ID`
struct SandboxRevokeCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke a transaction (Family Sharing lost; REVOKE is sent).")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The transaction's ID.") var transactionID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send("POST", ["transactions", transactionID, "revoke"], done: "revoked")
    }
}

/// `kakin sandbox renew ORIGINAL_ID`
struct SandboxRenewCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "renew", abstract: "Renew a subscription now, without waiting for its expiry.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The subscription's original transaction ID.") var originalTransactionID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send("POST", ["subscriptions", originalTransactionID, "renew"], done: "renewed")
    }
}

/// `kakin sandbox fail-renewals ORIGINAL_ID`
struct SandboxFailRenewalsCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "fail-renewals", abstract: "Make a subscription's renewals fail (billing problem).")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The subscription's original transaction ID.") var originalTransactionID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send(
            "POST", ["subscriptions", originalTransactionID, "fail-renewals"],
            done: "renewals of \(originalTransactionID) now fail")
    }
}

/// `kakin sandbox resolve-billing ORIGINAL_ID`
struct SandboxResolveBillingCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve-billing", abstract: "End a subscription's billing problem.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The subscription's original transaction ID.") var originalTransactionID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send(
            "POST", ["subscriptions", originalTransactionID, "resolve-billing"],
            done: "billing of \(originalTransactionID) resolved")
    }
}

/// `kakin sandbox auto-renew ORIGINAL_ID off|on`
struct SandboxAutoRenewCommand: SandboxControlCommand {
    enum State: String, ExpressibleByArgument, CaseIterable {
        case off, on
    }

    static let configuration = CommandConfiguration(
        commandName: "auto-renew",
        abstract: "Turn a subscription's automatic renewal off or on (DID_CHANGE_RENEWAL_STATUS is sent).")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The subscription's original transaction ID.") var originalTransactionID: String
    @Argument(help: "off or on.") var state: State

    func produceOutput() async -> CommandOutput {
        await connection.client.send(
            "POST", ["subscriptions", originalTransactionID, "auto-renew", state.rawValue],
            done: "automatic renewal of \(originalTransactionID) is \(state.rawValue)")
    }
}

/// `kakin sandbox approve PENDING_ID`
struct SandboxApproveCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve", abstract: "Approve a purchase waiting for ask to buy.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The pending purchase's ID.") var pendingID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send("POST", ["pending", pendingID, "approve"], done: "approved")
    }
}

/// `kakin sandbox decline PENDING_ID`
struct SandboxDeclineCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "decline", abstract: "Decline a purchase waiting for ask to buy.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The pending purchase's ID.") var pendingID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send("POST", ["pending", pendingID, "decline"], done: "declined")
    }
}

/// `kakin sandbox clear TESTER_ID`
struct SandboxClearCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear", abstract: "Clear a tester's purchase history.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Argument(help: "The tester's ID.") var testerID: String

    func produceOutput() async -> CommandOutput {
        await connection.client.send(
            "POST", ["testers", testerID, "clear"], done: "purchase history of \(testerID) cleared")
    }
}

/// `kakin sandbox clock advance SECONDS` and `kakin sandbox clock rate R`
struct SandboxClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock", abstract: "Move the sandbox clock or change its speed.",
        subcommands: [Advance.self, Rate.self])

    struct Advance: SandboxControlCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the clock forward; renewals and expiries up to then happen at once.")
        @OptionGroup var connection: SandboxConnectionOptions
        @Argument(help: "Seconds to move forward (2678400 is 31 days).") var seconds: Double

        func validate() throws {
            guard seconds.isFinite, seconds > 0 else {
                throw ValidationError("SECONDS must be a positive number; found \(seconds)")
            }
        }

        func produceOutput() async -> CommandOutput {
            await connection.client.send("POST", ["clock"], body: ["advanceSeconds": seconds], done: "advanced")
        }
    }

    struct Rate: SandboxControlCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sandbox seconds per real second (86400: a day a second; 0 stops the clock).")
        @OptionGroup var connection: SandboxConnectionOptions
        @Argument(help: "The rate, 0 or more.") var rate: Double

        func validate() throws {
            guard rate.isFinite, rate >= 0 else { throw ValidationError("R must be 0 or more; found \(rate)") }
        }

        func produceOutput() async -> CommandOutput {
            await connection.client.send("POST", ["clock"], body: ["rate": rate], done: "rate set")
        }
    }
}

/// `kakin sandbox settings [--ask-to-buy BOOL] [--grace-period-days N] [--fail-purchases-with CODE|none]
/// [--notification-url URL|none]`: changes only what is given; with no option, prints the settings.
struct SandboxSettingsCommand: SandboxControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Print the sandbox-wide settings, or change some of them.")
    @OptionGroup var connection: SandboxConnectionOptions
    @Option(name: .customLong("ask-to-buy"), help: "true or false: ask to buy for every tester.")
    var askToBuy: Bool?
    @Option(name: .customLong("grace-period-days"), help: "Billing grace period in days (0 turns it off).")
    var gracePeriodDays: Int?
    @Option(
        name: .customLong("fail-purchases-with"),
        help: "A StoreKit error code every purchase fails with, or `none`.")
    var failPurchasesWith: String?
    @Option(name: .customLong("notification-url"), help: "Where notifications go, or `none` to queue them.")
    var notificationURL: String?

    func validate() throws {
        if let gracePeriodDays, gracePeriodDays < 0 { throw ValidationError("--grace-period-days must be 0 or more") }
        if let failPurchasesWith, failPurchasesWith != "none", Int(failPurchasesWith) == nil {
            throw ValidationError("--fail-purchases-with must be a StoreKit error code or none; found \(failPurchasesWith)")
        }
        if let notificationURL, notificationURL != "none", URL(string: notificationURL)?.scheme == nil {
            throw ValidationError("--notification-url must be an absolute URL or none; found \(notificationURL)")
        }
    }

    func produceOutput() async -> CommandOutput {
        var body: [String: Any] = [:]
        if let askToBuy { body["askToBuy"] = askToBuy }
        if let gracePeriodDays { body["gracePeriodDays"] = gracePeriodDays }
        if let failPurchasesWith { body["failPurchasesWith"] = Int(failPurchasesWith).map { $0 as Any } ?? NSNull() }
        if let notificationURL { body["notificationURL"] = notificationURL == "none" ? NSNull() : notificationURL }
        if body.isEmpty { return await connection.client.send("GET", ["settings"], done: "{}") }
        return await connection.client.send("PUT", ["settings"], body: body, done: "updated")
    }
}

/// `kakin sandbox ca show`, `kakin sandbox ca revoke leaf|intermediate` and
/// `kakin sandbox ca responder on|off`: the sandbox's signing certificates.
struct SandboxCACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract:
            "Show the sandbox's signing certificates, revoke one (the sandbox issues a new one), or switch its OCSP responder.",
        discussion: """
            The sandbox's intermediate and leaf name its OCSP responder (<sandbox URL>/ocsp), as the \
            App Store's do. Revoking the leaf revokes it and issues a new leaf under the same \
            intermediate; revoking the intermediate revokes it and its leaf and issues new ones \
            under the same root. Everything signed afterwards uses the new leaf, and the responder \
            answers "revoked" for the old certificates.
            """,
        subcommands: [Show.self, Revoke.self, Responder.self])

    /// The certificates that can be revoked.
    enum Revocable: String, ExpressibleByArgument, CaseIterable {
        case leaf, intermediate
    }

    struct Show: SandboxControlCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the certificates in use, those revoked, and the OCSP responder's URL.")
        @OptionGroup var connection: SandboxConnectionOptions

        func produceOutput() async -> CommandOutput {
            await connection.client.send("GET", ["ca"], done: "{}")
        }
    }

    struct Revoke: SandboxControlCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke the leaf or the intermediate; the sandbox signs with new certificates from then on.")
        @OptionGroup var connection: SandboxConnectionOptions
        @Argument(help: "leaf or intermediate (the root is never revoked).") var certificate: Revocable

        func produceOutput() async -> CommandOutput {
            await connection.client.send(
                "POST", ["ca", "revoke"], body: ["certificate": certificate.rawValue], done: "revoked")
        }
    }

    struct Responder: SandboxControlCommand {
        static let configuration = CommandConfiguration(
            abstract: "Switch the OCSP responder off (it answers 503, as a responder that is down) or on again.")
        @OptionGroup var connection: SandboxConnectionOptions
        @Argument(help: "on or off.") var state: State

        enum State: String, ExpressibleByArgument, CaseIterable {
            case on, off
        }

        func produceOutput() async -> CommandOutput {
            await connection.client.send(
                "POST", ["ca", "responder"], body: ["available": state == .on], done: "responder \(state.rawValue)")
        }
    }
}
