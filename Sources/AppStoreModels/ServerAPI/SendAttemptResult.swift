/// How one attempt to deliver a notification to the app's server ended.
public struct SendAttemptResult: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server answered with a success status.
    public static let success = Self(rawValue: "SUCCESS")
    /// The server did not answer in time.
    public static let timedOut = Self(rawValue: "TIMED_OUT")
    /// The TLS connection could not be set up.
    public static let tlsIssue = Self(rawValue: "TLS_ISSUE")
    /// The server's redirects went round in a circle.
    public static let circularRedirect = Self(rawValue: "CIRCULAR_REDIRECT")
    /// The server closed the connection without answering.
    public static let noResponse = Self(rawValue: "NO_RESPONSE")
    /// The connection failed.
    public static let socketIssue = Self(rawValue: "SOCKET_ISSUE")
    /// The server answered in a character set Apple does not accept.
    public static let unsupportedCharset = Self(rawValue: "UNSUPPORTED_CHARSET")
    /// The server's answer was not valid HTTP.
    public static let invalidResponse = Self(rawValue: "INVALID_RESPONSE")
    /// The connection closed before the answer was complete.
    public static let prematureClose = Self(rawValue: "PREMATURE_CLOSE")
    /// The server answered with a status outside 200–206.
    public static let unsuccessfulHTTPResponseCode = Self(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// Any other failure.
    public static let other = Self(rawValue: "OTHER")

    public static let knownValues: [Self] = [
        .success, .timedOut, .tlsIssue, .circularRedirect, .noResponse, .socketIssue, .unsupportedCharset,
        .invalidResponse, .prematureClose, .unsuccessfulHTTPResponseCode, .other,
    ]
}
