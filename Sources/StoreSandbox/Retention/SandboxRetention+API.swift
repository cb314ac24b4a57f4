import AppStoreModels
import Foundation

/// The Retention Messaging API's operations, checked as Apple checks them; a refusal is thrown
/// with Apple's error code.
extension SandboxRetention {
    func uploadImage(
        _ identifier: String, png: Data, size: RetentionImageSize?, bundleID: String
    ) throws(AppleAPIFailure) {
        var app = apps[bundleID] ?? AppState()
        guard app.images[identifier] == nil else {
            throw AppleAPIFailure(.imageAlreadyExists, "An image with this identifier already exists.")
        }
        if let size, !size.isKnown { throw AppleAPIFailure(.invalidImageSize, "Invalid image size.") }
        guard app.images.count < RetentionMessaging.maximumImages else {
            throw AppleAPIFailure(.maximumNumberOfImagesReached, "The maximum number of images was reached.")
        }
        guard let header = PNGHeader(png) else { throw AppleAPIFailure(.invalidImage, "The image is not a PNG.") }
        if size ?? .fullSize == .fullSize, header.width != 3840 || header.height != 2160 || header.hasAlpha {
            throw AppleAPIFailure(.invalidImage, "The image must be 3840 × 2160 pixels, without transparency.")
        }
        app.images[identifier] = StoredImage(
            png: png, size: size, state: configuration.reviewState, sequence: nextSequence())
        apps[bundleID] = app
        try saveUploads()
    }

    func deleteImage(_ identifier: String, bundleID: String) throws(AppleAPIFailure) {
        guard let app = apps[bundleID], app.images[identifier] != nil else {
            throw AppleAPIFailure(.imageNotFound, "Image not found.")
        }
        let inUse = app.messages.values.contains { stored in
            stored.body.image?.imageIdentifier.lowercased() == identifier
                || (stored.body.bulletPoints ?? []).contains { $0.imageIdentifier.lowercased() == identifier }
        }
        guard !inUse else { throw AppleAPIFailure(.imageInUse, "A message uses this image.") }
        apps[bundleID]?.images[identifier] = nil
        try saveUploads()
    }

    func uploadMessage(
        _ identifier: String, _ body: UploadMessageRequestBody, bundleID: String
    ) throws(AppleAPIFailure) {
        var app = apps[bundleID] ?? AppState()
        guard app.messages[identifier] == nil else {
            throw AppleAPIFailure(.messageAlreadyExists, "A message with this identifier already exists.")
        }
        guard body.header.count <= RetentionMessaging.maximumHeaderLength else {
            throw AppleAPIFailure(.headerTooLong, "The header is too long.")
        }
        guard body.body.count <= RetentionMessaging.maximumBodyLength else {
            throw AppleAPIFailure(.bodyTooLong, "The body is too long.")
        }
        let bullets = body.bulletPoints ?? []
        guard bullets.count <= RetentionMessaging.maximumBulletPoints else {
            throw AppleAPIFailure(.tooManyBulletPoints, "Too many bullet points.")
        }
        guard bullets.allSatisfy({ $0.text.count <= RetentionMessaging.maximumBulletPointTextLength }) else {
            throw AppleAPIFailure(.bulletPointTextTooLong, "A bullet point's text is too long.")
        }
        let altTexts = bullets.map(\.altText) + (body.image.map { [$0.altText] } ?? [])
        guard altTexts.allSatisfy({ $0.count <= RetentionMessaging.maximumAltTextLength }) else {
            throw AppleAPIFailure(.altTextTooLong, "The alternative text is too long.")
        }
        if body.headerPosition == .aboveImage, body.image == nil {
            throw AppleAPIFailure(.headerAboveImageRequiresImage, "A header above the image needs an image.")
        }
        let images = bullets.map(\.imageIdentifier) + (body.image.map { [$0.imageIdentifier] } ?? [])
        guard images.allSatisfy({ app.images[$0.lowercased()] != nil }) else {
            throw AppleAPIFailure(.imageNotFound, "Image not found.")
        }
        app.messages[identifier] = StoredMessage(body: body, state: configuration.reviewState, sequence: nextSequence())
        apps[bundleID] = app
        try saveUploads()
    }

    func deleteMessage(_ identifier: String, bundleID: String) throws(AppleAPIFailure) {
        guard apps[bundleID]?.messages[identifier] != nil else {
            throw AppleAPIFailure(.messageNotFound, "Message not found.")
        }
        let defaults = apps[bundleID]?.defaults.filter { $0.value != identifier } ?? [:]
        apps[bundleID]?.messages[identifier] = nil
        apps[bundleID]?.defaults = defaults
        try saveUploads()
    }

    func configureDefaultMessage(
        productID: String, locale: String, _ request: DefaultConfigurationRequest, bundleID: String
    ) throws(AppleAPIFailure) {
        try Self.checkLocale(locale)
        guard let identifier = request.messageIdentifier?.lowercased(),
            let message = apps[bundleID]?.messages[identifier]
        else { throw AppleAPIFailure(.messageNotFound, "Message not found.") }
        guard message.state == .approved else {
            throw AppleAPIFailure(.messageNotApproved, "The message is not approved.")
        }
        if let image = message.body.image?.imageIdentifier.lowercased(),
            apps[bundleID]?.images[image]?.state != .approved
        {
            throw AppleAPIFailure(.imageNotApproved, "The message's image is not approved.")
        }
        apps[bundleID, default: AppState()].defaults[DefaultKey(productID: productID, locale: locale)] = identifier
        try saveUploads()
    }

    func defaultMessage(
        productID: String, locale: String, bundleID: String
    ) throws(AppleAPIFailure) -> DefaultConfigurationResponse {
        try Self.checkLocale(locale)
        guard let identifier = apps[bundleID]?.defaults[DefaultKey(productID: productID, locale: locale)] else {
            throw AppleAPIFailure(.defaultMessageNotFound, "Default message not found.")
        }
        return DefaultConfigurationResponse(messageIdentifier: identifier)
    }

    func deleteDefaultMessage(productID: String, locale: String, bundleID: String) throws(AppleAPIFailure) {
        _ = try defaultMessage(productID: productID, locale: locale, bundleID: bundleID)
        apps[bundleID]?.defaults[DefaultKey(productID: productID, locale: locale)] = nil
        try saveUploads()
    }

    /// Accepts `http` as well as `https`, so that a server on the tester's machine can be named.
    func configureRealtimeURL(_ request: RealtimeURLRequest, bundleID: String) throws(AppleAPIFailure) {
        guard request.realtimeURL.count <= 256, let url = URL(string: request.realtimeURL),
            ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false
        else { throw AppleAPIFailure(.invalidRealtimeURL, "Invalid realtime URL.") }
        apps[bundleID, default: AppState()].realtimeURL = url
        try saveUploads()
    }

    func configuredRealtimeURL(bundleID: String) throws(AppleAPIFailure) -> URL {
        guard let url = apps[bundleID]?.realtimeURL else {
            throw AppleAPIFailure(.realtimeURLNotFound, "Realtime URL not found.")
        }
        return url
    }

    func deleteRealtimeURL(bundleID: String) throws(AppleAPIFailure) {
        _ = try configuredRealtimeURL(bundleID: bundleID)
        apps[bundleID]?.realtimeURL = nil
        try saveUploads()
    }

    /// A locale as Apple writes them: a language, then region or script parts (`en-US`, `zh-Hant-TW`).
    static func checkLocale(_ locale: String) throws(AppleAPIFailure) {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        let language = parts.first ?? ""
        let valid =
            (2...3).contains(language.count) && language.allSatisfy { $0.isASCII && $0.isLowercase }
            && parts.dropFirst().allSatisfy { part in
                (2...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            }
        guard valid else { throw AppleAPIFailure(.invalidLocale, "Invalid locale.") }
    }
}

/// The part of a PNG's header the sandbox checks: the signature, the size and whether it has an
/// alpha channel.
struct PNGHeader {
    let width: UInt32
    let height: UInt32
    let hasAlpha: Bool

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The header of `data`; `nil` when it does not start as a PNG with its `IHDR` chunk does.
    init?(_ data: Data) {
        let bytes = [UInt8](data.prefix(26))
        guard bytes.count == 26, Array(bytes[0..<8]) == Self.signature, Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        func number(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        width = number(16)
        height = number(20)
        // Colour types 4 (grey and alpha) and 6 (truecolour and alpha) carry transparency.
        hasAlpha = bytes[25] == 4 || bytes[25] == 6
    }
}
