import Foundation
import Testing

/// The Stripe emulator the Stripe tests may use: localstripe, at the URL in
/// `KAKIN_TEST_STRIPE_URL` (`source scripts/localstripe` starts one and sets it; `scripts/test`
/// does too). Without it, the tests that need it are skipped with ``skipMessage``:
///
/// ```swift
/// @Suite(.enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
/// ```
public enum StripeEmulator {
    /// The emulator's URL, from `KAKIN_TEST_STRIPE_URL`; `nil` when unset or empty.
    public static let url: URL? = ProcessInfo.processInfo.environment["KAKIN_TEST_STRIPE_URL"]
        .flatMap { $0.isEmpty ? nil : URL(string: $0) }

    /// Whether an emulator is available.
    public static var available: Bool { url != nil }

    /// Why a test that needs the emulator is skipped without one.
    public static let skipMessage: Comment =
        "KAKIN_TEST_STRIPE_URL is not set, so the tests against the Stripe emulator are skipped (set it, e.g. `source scripts/localstripe`)"

    /// A secret key the emulator accepts (any key that starts with `sk_test_`).
    public static let secretKey = "sk_test_kakin"
}
