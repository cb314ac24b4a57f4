/// A requested product ID that the catalog could not return, with the reason.
public struct InvalidProductIdentifier: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The ID exactly as it was requested.
    public var identifier: String
    /// Why it is invalid.
    public var reason: InvalidProductReason
    /// A sentence for a developer; the reason's ``InvalidProductReason/message``, sometimes with
    /// details such as the storefront.
    public var message: String

    /// Creates an entry; the message defaults to the reason's own.
    public init(identifier: String, reason: InvalidProductReason, message: String? = nil) {
        self.identifier = identifier
        self.reason = reason
        self.message = message ?? reason.message
    }

    enum CodingKeys: String, CodingKey {
        case identifier
        case reason
        case message
    }

    /// The ID, the reason and the message on one line.
    public var description: String { "\(identifier): \(reason.rawValue): \(message)" }
}
