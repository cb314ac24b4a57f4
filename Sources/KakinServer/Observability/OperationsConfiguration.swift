/// `operations`: who may read the server's metrics.
///
/// `/metrics` shows more than request counts: sign-in failures and refusals, ledger events, offer
/// outcomes. With neither setting it answers anyone who can reach the server's port (and the
/// server says so in a warning at start); a deployment reachable from outside sets one or both:
///
/// ```json
/// "operations": {
///   "metricsToken": "env:KAKIN_METRICS_TOKEN",
///   "metricsListen": {"host": "127.0.0.1", "port": 9090}
/// }
/// ```
///
/// - `metricsToken`: `/metrics` answers only requests carrying `Authorization: Bearer <token>`
///   (401 otherwise); at least 16 characters.
/// - `metricsListen`: `/metrics` is served on this second address only, and the main listener
///   answers 404 for it. With a token too, the second listener asks for the token.
public struct OperationsConfiguration: Sendable {
    /// `operations.metricsToken`: the bearer token `/metrics` asks for; `nil` asks for none.
    public var metricsToken: String?
    /// `operations.metricsListen`: the address of a listener of its own for `/metrics`; `nil`
    /// serves `/metrics` on the main listener.
    public var metricsListen: ServerConfiguration.Listen?

    /// The fewest characters a metrics token may have.
    public static let minimumTokenLength = 16

    /// Creates the settings; by default `/metrics` is open on the main listener.
    public init(metricsToken: String? = nil, metricsListen: ServerConfiguration.Listen? = nil) {
        self.metricsToken = metricsToken
        self.metricsListen = metricsListen
    }

    /// Whether `/metrics` answers anyone who can reach the main listener: neither a token nor a
    /// listener of its own is configured.
    public var metricsOpenToAnyone: Bool { metricsToken == nil && metricsListen == nil }

    /// Reads the `operations` object; `listen` is the main listener, which `metricsListen` must not
    /// take.
    static func read(
        _ reader: ConfigurationReader, listen: ServerConfiguration.Listen
    ) throws(ServerError) -> OperationsConfiguration {
        var operations = OperationsConfiguration()
        if let token = try reader.string("metricsToken") {
            guard token.count >= minimumTokenLength else {
                throw reader.failure("metricsToken", "must be at least \(minimumTokenLength) characters")
            }
            operations.metricsToken = token
        }
        if let address = try reader.object("metricsListen") {
            var metricsListen = ServerConfiguration.Listen(host: "127.0.0.1", port: 9090)
            metricsListen.host = try address.string("host") ?? metricsListen.host
            metricsListen.port = Int(try address.integer("port", in: 0...65_535) ?? Int64(metricsListen.port))
            try address.finish()
            let wildcards: Set<String> = ["0.0.0.0", "::", "[::]", "*", ""]
            if metricsListen.port != 0, metricsListen.port == listen.port,
                metricsListen.host == listen.host || wildcards.contains(metricsListen.host)
                    || wildcards.contains(listen.host)
            {
                throw reader.failure(
                    "metricsListen", "must not be the main listener's address (\(listen.host):\(listen.port))")
            }
            operations.metricsListen = metricsListen
        }
        try reader.finish()
        return operations
    }
}
