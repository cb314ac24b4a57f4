import AppStoreModels
public import Foundation

/// What an app uploaded through the Retention Messaging API, as the sandbox keeps it on disk: the
/// messages, images, default messages and real-time URL (not the requests sent or the performance
/// tests run).
struct RetentionUploads: Codable, Sendable {
    struct Message: Codable, Sendable {
        var identifier: String
        var body: UploadMessageRequestBody
        var state: RetentionReviewState
        var sequence: Int
    }

    struct Image: Codable, Sendable {
        var identifier: String
        var png: Data
        var size: RetentionImageSize?
        var state: RetentionReviewState
        var sequence: Int
    }

    struct Default: Codable, Sendable {
        var productID: String
        var locale: String
        var messageIdentifier: String
    }

    struct App: Codable, Sendable {
        var bundleID: String
        var messages: [Message]
        var images: [Image]
        var defaults: [Default]
        var realtimeURL: URL?
    }

    var apps: [App]
    var sequence: Int
}

extension SandboxRetention {
    /// Keeps what apps upload in `file` (JSON, replaced whole at each change): what it holds now
    /// is read back, so a sandbox started again on the same data directory has the messages,
    /// images, default messages and real-time URL it had. A real-time URL given in
    /// ``Configuration/realtimeURL`` still wins over the saved one.
    ///
    /// - Throws: when `file` exists and cannot be read as the sandbox wrote it.
    public func keepUploads(in file: URL) throws {
        if FileManager.default.fileExists(atPath: file.path) {
            let uploads = try JSONDecoder().decode(RetentionUploads.self, from: Data(contentsOf: file))
            for saved in uploads.apps {
                var app = apps[saved.bundleID] ?? AppState()
                for message in saved.messages {
                    app.messages[message.identifier] = StoredMessage(
                        body: message.body, state: message.state, sequence: message.sequence)
                }
                for image in saved.images {
                    app.images[image.identifier] = StoredImage(
                        png: image.png, size: image.size, state: image.state, sequence: image.sequence)
                }
                for entry in saved.defaults {
                    app.defaults[DefaultKey(productID: entry.productID, locale: entry.locale)] = entry.messageIdentifier
                }
                app.realtimeURL = saved.realtimeURL
                apps[saved.bundleID] = app
            }
            sequence = max(sequence, uploads.sequence)
        }
        if let url = configuration.realtimeURL { apps[bundleID, default: AppState()].realtimeURL = url }
        uploadsFile = file
    }

    /// Writes the uploads to the file given to ``keepUploads(in:)``, if any; Apple's retryable
    /// internal error when it cannot.
    func saveUploads() throws(AppleAPIFailure) {
        guard let uploadsFile else { return }
        let uploads = RetentionUploads(
            apps: apps.keys.sorted().map { bundleID in
                let app = apps[bundleID] ?? AppState()
                return RetentionUploads.App(
                    bundleID: bundleID,
                    messages: app.messages.map {
                        .init(identifier: $0.key, body: $0.value.body, state: $0.value.state, sequence: $0.value.sequence)
                    }.sorted { $0.sequence < $1.sequence },
                    images: app.images.map {
                        .init(
                            identifier: $0.key, png: $0.value.png, size: $0.value.size, state: $0.value.state,
                            sequence: $0.value.sequence)
                    }.sorted { $0.sequence < $1.sequence },
                    defaults: app.defaults.map {
                        .init(productID: $0.key.productID, locale: $0.key.locale, messageIdentifier: $0.value)
                    }.sorted { ($0.productID, $0.locale) < ($1.productID, $1.locale) },
                    realtimeURL: app.realtimeURL)
            },
            sequence: sequence)
        do { try JSONEncoder().encode(uploads).write(to: uploadsFile, options: .atomic) } catch {
            throw AppleAPIFailure(.generalInternalRetryable, "The upload could not be kept: \(error)")
        }
    }
}
