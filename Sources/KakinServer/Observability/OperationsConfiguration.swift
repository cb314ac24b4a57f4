/// `operations`: who may read the server's metrics.
///
/// `/metrics` shows more than request counts: sign-in failures and refusals, ledger events, offer
/// outcomes. With neither setting it answers only requests made on this machine (a loopback peer,
/// not through a proxy that names a client in `X-Forwarded-For` or `Forwarded`); a deployment
/// scraped from elsewhere sets one or both:
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
/// - `metricsFromAnywhere`: `true` opens `/metrics` on the main listener to anyone who can reach
///   it (the server then says so in a warning at start); for a network nobody else reaches.
public struct OperationsConfiguration: Sendable {
    /// `operations.metricsToken`: the bearer token `/metrics` asks for; `nil` asks for none.
    public var metricsToken: String?
    /// `operations.metricsListen`: the address of a listener of its own for `/metrics`; `nil`
    /// serves `/metrics` on the main listener.
    public var metricsListen: ServerConfiguration.Listen?
    /// `operations.metricsFromAnywhere`: without a token or a listener of its own, whether
    /// `/metrics` answers every peer (`true`) or requests made on this machine only (`false`, the
    /// default).
    public var metricsFromAnywhere = false

    /// The fewest characters a metrics token may have.
    public static let minimumTokenLength = 16

    /// Creates the settings; by default `/metrics` answers requests made on this machine only.
    public init(metricsToken: String? = nil, metricsListen: ServerConfiguration.Listen? = nil) {
        self.metricsToken = metricsToken
        self.metricsListen = metricsListen
    }

    /// Whether `/metrics` answers anyone who can reach the main listener: opened to every peer, with
    /// neither a token nor a listener of its own.
    public var metricsOpenToAnyone: Bool { metricsFromAnywhere && metricsToken == nil && metricsListen == nil }

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
        operations.metricsFromAnywhere = try reader.boolean("metricsFromAnywhere") ?? false
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
