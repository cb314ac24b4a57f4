/// The body of an App Store Server API error: a code for programs and a message for people.
public struct APIErrorResponse: Codable, Hashable, Sendable, Error {
    /// What went wrong, as a number; see ``APIErrorCode``.
    public var errorCode: APIErrorCode?
    /// What went wrong, in Apple's words.
    public var errorMessage: String?

    /// Creates an error body; every field defaults to absent.
    public init(errorCode: APIErrorCode? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    enum CodingKeys: String, CodingKey {
        case errorCode
        case errorMessage
    }
}
