public import AppStoreModels
public import Foundation

/// What operators do with one app's Retention Messaging, from the command line (`kakin retention`)
/// and from the dashboard alike: the app's ``RetentionMessagingAPIClient`` aimed at one
/// environment's host, and the few steps both need around it (identifiers made when none is
/// given, a message put together from a form's fields).
///
/// The hosts are the app's App Store Server API endpoints (`endpoints.serverAPIProduction` and
/// `endpoints.serverAPISandbox`, Apple's by default; the embedded sandbox's under `kakin serve`), and
/// the key is the app's In-App Purchase key (`appStoreServerAPI`): Apple serves the Retention
/// Messaging API beside the App Store Server API, with the same tokens.
public struct RetentionOperations: Sendable {
    /// The app whose messages these are.
    public let bundleID: String
    /// The environment whose messages are read and written: each keeps its own.
    public let environment: AppStoreEnvironment
    /// The client, reaching the environment's host with the app's key.
    public var client: RetentionMessagingAPIClient

    /// Operations on `app`'s messages in `environment`, sent over `exchange`; `now` reads Apple's
    /// `Retry-After`.
    ///
    /// - Throws: ``ServerError/Code/notConfigured`` when the app has no In-App Purchase key
    ///   (`appStoreServerAPI`) to sign its requests with.
    public init(
        app: AppConfiguration, environment: AppStoreEnvironment, exchange: any HTTPExchange,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(ServerError) {
        guard let access = app.serverAPI else {
            throw ServerError(
                .notConfigured,
                "\(app.bundleID) has no In-App Purchase key (appStoreServerAPI) to call the Retention Messaging API with",
                cause: "notConfigured")
        }
        bundleID = app.bundleID
        self.environment = environment
        client = RetentionMessagingAPIClient(access: access, exchange: exchange, bundleID: app.bundleID, now: now)
    }

    /// `sandbox` or `production` (any case) as an environment; `nil` for anything else.
    public static func environment(named name: String) -> AppStoreEnvironment? {
        switch name.lowercased() {
        case "sandbox": .sandbox
        case "production": .production
        default: nil
        }
    }

    /// A message from the fields an operator fills in: the header, the body and, when an image
    /// identifier is given, the image with its alternative text.
    ///
    /// - Throws: ``ServerError/Code/invalidRequest`` for a missing header or body, an image
    ///   identifier that is not a UUID, or alternative text without an image (or an image without it).
    public static func message(
        header: String, body: String, imageIdentifier: String? = nil, altText: String? = nil
    ) throws(ServerError) -> UploadMessageRequestBody {
        let header = header.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !header.isEmpty, !body.isEmpty else {
            throw ServerError(.invalidRequest, "a message needs a header and a body")
        }
        let image = imageIdentifier.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        let alt = altText.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        switch (image, alt) {
        case (nil, nil):
            return UploadMessageRequestBody(header: header, body: body)
        case (let image?, let alt?):
            let identifier = try uuid(image, "the image identifier")
            return UploadMessageRequestBody(
                header: header, body: body,
                image: UploadMessageImage(imageIdentifier: identifier.uuidString.lowercased(), altText: alt))
        case (nil, _?):
            throw ServerError(.invalidRequest, "alternative text describes an image: give the image identifier too")
        case (_?, nil):
            throw ServerError(.invalidRequest, "an image needs alternative text, read aloud by VoiceOver")
        }
    }

    /// `text` as a UUID, or an `invalidRequest` naming `what`.
    public static func uuid(_ text: String, _ what: String) throws(ServerError) -> UUID {
        guard let uuid = UUID(uuidString: text.trimmingCharacters(in: .whitespaces)) else {
            throw ServerError(.invalidRequest, "\(what) must be a UUID; found \(text)")
        }
        return uuid
    }

    /// Uploads `message` under `identifier`, or under a new UUID when none is given; returns the
    /// identifier used.
    @discardableResult
    public func uploadMessage(
        _ message: UploadMessageRequestBody, identifier: UUID? = nil
    ) async throws(ServerError) -> UUID {
        let identifier = identifier ?? UUID()
        try await client.uploadMessage(identifier, message, environment: environment)
        return identifier
    }

    /// Uploads `png` under `identifier`, or under a new UUID when none is given; returns the
    /// identifier used.
    @discardableResult
    public func uploadImage(
        _ png: Data, size: RetentionImageSize? = nil, identifier: UUID? = nil
    ) async throws(ServerError) -> UUID {
        let identifier = identifier ?? UUID()
        try await client.uploadImage(identifier, png: png, size: size, environment: environment)
        return identifier
    }

    /// The default message of `productID` in `locale`; `nil` when none is configured
    /// (`APIErrorCode/defaultMessageNotFound`).
    public func defaultMessage(productID: String, locale: String) async throws(ServerError) -> String? {
        do {
            return try await client.defaultMessage(productID: productID, locale: locale, environment: environment)
                .messageIdentifier
        } catch  where error.appleStatus == APIErrorCode.defaultMessageNotFound.rawValue {
            return nil
        }
    }

    /// The real-time URL; `nil` when none is set (`APIErrorCode/realtimeURLNotFound`).
    public func realtimeURL() async throws(ServerError) -> String? {
        do { return try await client.realtimeURL(environment: environment).realtimeURL } catch
            where error.appleStatus == APIErrorCode.realtimeURLNotFound.rawValue
        {
            return nil
        }
    }
}
