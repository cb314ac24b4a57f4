public import Logging

extension ServerConfiguration {
    /// The app named `bundleID`, or the only app when `bundleID` is `nil`, as a server with this
    /// configuration runs it (its keys, catalog and roots read from their files): for operators'
    /// commands that act on one app (`kakin retention`).
    ///
    /// - Throws: ``ServerError/Code/unknownApp`` for a bundle ID the configuration lacks;
    ///   ``ServerError/Code/invalidRequest`` when several apps are configured and none is named;
    ///   ``ServerError/Code/invalidConfiguration`` when one of the app's files cannot be read.
    public func appConfiguration(bundleID: String?) throws -> AppConfiguration {
        let index: Int
        if let bundleID {
            guard let found = apps.firstIndex(where: { $0.bundleID == bundleID }) else {
                throw ServerError(
                    .unknownApp,
                    "the configuration has no app \(bundleID); it has \(apps.map(\.bundleID).joined(separator: ", "))")
            }
            index = found
        } else {
            guard apps.count == 1 else {
                throw ServerError(
                    .invalidRequest, "the configuration has \(apps.count) apps: name one with --bundle-id")
            }
            index = 0
        }
        return try ServerParts.appConfiguration(apps[index], index: index, server: self)
    }

    /// Makes the purchase service of a server with this configuration (its ledger, brought up to
    /// date, and its apps), runs `body` with it and closes the ledger: for operators' commands that
    /// read the ledger as the server does (`kakin retention preview`).
    public func withService<R: Sendable>(
        logger: Logger = Logger(label: "kakin.server"), _ body: (PurchaseService) async throws -> R
    ) async throws -> R {
        try await withParts(logger: logger) { try await body($0.service) }
    }
}
