/// Which store wrote an app receipt: attribute 0 of the payload.
///
/// The raw value is kept as Apple wrote it, so a receipt type this version does not know still
/// decodes, compares and serializes back unchanged.
public struct AppReceiptType: WireEnum {
    /// The text of attribute 0, such as `ProductionSandbox`.
    public let rawValue: String
    /// Creates a receipt type from any text.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The App Store.
    public static let production = Self(rawValue: "Production")
    /// The App Store's sandbox (TestFlight and sandbox tester accounts), and Kakin's sandbox store.
    public static let productionSandbox = Self(rawValue: "ProductionSandbox")
    /// An app bought through the Volume Purchase Program.
    public static let productionVPP = Self(rawValue: "ProductionVPP")
    /// A Volume Purchase Program app in the sandbox.
    public static let productionVPPSandbox = Self(rawValue: "ProductionVPPSandbox")
    /// StoreKit testing in Xcode.
    public static let xcode = Self(rawValue: "Xcode")

    /// The receipt types this version knows by name.
    public static let knownValues: [Self] = [
        .production, .productionSandbox, .productionVPP, .productionVPPSandbox, .xcode,
    ]

    /// The environment this receipt type belongs to, as Apple's verifier maps it; `nil` when unknown.
    public var environment: AppStoreEnvironment? {
        switch self {
        case .production, .productionVPP: .production
        case .productionSandbox, .productionVPPSandbox: .sandbox
        case .xcode: .xcode
        case Self(rawValue: AppStoreEnvironment.localTesting.rawValue): .localTesting
        default: nil
        }
    }
}
