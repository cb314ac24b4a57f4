/// The body of Set App Account Token: link a purchase to an account in the developer's system.
public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
    /// The UUID to store on the transaction, as a string.
    public var appAccountToken: String?

    /// Creates a request.
    public init(appAccountToken: String? = nil) {
        self.appAccountToken = appAccountToken
    }

    enum CodingKeys: String, CodingKey {
        case appAccountToken
    }
}
