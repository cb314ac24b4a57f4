import Foundation

/// The body of `POST /v1/customers/{anonymous user}/alias`: the identified customer that the
/// anonymous customer of the path becomes. The server moves the anonymous customer's purchases
/// and balances to `appUserId` and remembers the alias, so requests that still name the anonymous
/// ID reach the identified customer.
public struct CustomerAliasRequest: Codable, Hashable, Sendable {
    /// The app's bundle ID.
    public var bundleId: String
    /// The identified customer (not anonymous, 1 to 256 characters).
    public var appUserId: String

    /// Creates a request.
    public init(bundleId: String, appUserId: String) {
        self.bundleId = bundleId
        self.appUserId = appUserId
    }
}
