/// The App Store environment a signed object or a receipt belongs to.
///
/// Apple writes it in `environment` (transactions, renewal info, notifications) and in
/// `receiptType` (app transactions). A verifier is configured with the environment it accepts, and
/// anything signed for another environment is rejected.
public struct AppStoreEnvironment: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The live App Store.
    public static let production = Self(rawValue: "Production")
    /// Apple's sandbox (TestFlight, sandbox tester accounts), and Kakin's StoreSandbox.
    public static let sandbox = Self(rawValue: "Sandbox")
    /// StoreKit testing in Xcode: signed by a self-signed certificate, trusted only on request.
    public static let xcode = Self(rawValue: "Xcode")
    /// A value Apple's libraries use in their own unit tests.
    public static let localTesting = Self(rawValue: "LocalTesting")

    public static let knownValues: [Self] = [.production, .sandbox, .xcode, .localTesting]
}
