import Foundation

/// A sandbox tester account, with the settings App Store Connect offers for one, and more.
///
/// Unlike Apple's sandbox, a tester's purchase history can be cleared, so the same account can run
/// the same test again instead of needing a new account every time.
public struct SandboxTester: Codable, Hashable, Sendable, Identifiable {
    /// A stable identifier, used in the device API.
    public var id: String
    /// A label for people: an email address in Apple's sandbox.
    public var name: String
    /// The tester's storefront: currency, language and prices follow it.
    public var storefront: String
    /// `false` when parental controls forbid purchases (`canMakePayments` is false).
    public var canMakePayments: Bool
    /// When on, every purchase is interrupted first (it comes back as failed, then completes after
    /// the tester "accepts terms" through the control API), as Apple's sandbox setting does.
    public var interruptsPurchases: Bool
    /// When on, purchases need a parent's approval (ask to buy): they are deferred until approved or declined.
    public var asksToBuy: Bool
    /// When the tester was created.
    public var createdAt: Date
    /// When a parent or guardian withdrew consent for this tester to use the app
    /// (RESCIND_CONSENT); `nil` while consent stands.
    public var consentRescindedDate: Date?

    /// Creates a tester.
    public init(
        id: String, name: String, storefront: String = "USA", canMakePayments: Bool = true,
        interruptsPurchases: Bool = false, asksToBuy: Bool = false, createdAt: Date
    ) {
        self.id = id
        self.name = name
        self.storefront = storefront
        self.canMakePayments = canMakePayments
        self.interruptsPurchases = interruptsPurchases
        self.asksToBuy = asksToBuy
        self.createdAt = createdAt
    }
}
