/// StoreSandbox: a local App Store that sells from Xcode `.storekit` catalogs, keeps sandbox
/// testers, runs purchases and subscriptions on an injected clock, and signs everything it hands
/// out exactly as the App Store does, with its own certificate authority.
public enum StoreSandbox {
    /// The version of the device and control APIs.
    public static let apiVersion = "v1"
}
