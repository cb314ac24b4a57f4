import AppStoreModels
import ArgumentParser
import Foundation
import KakinServer

/// `kakin retention messages list|upload|delete`
struct RetentionMessagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages", abstract: "List, upload and delete the app's retention messages.",
        subcommands: [
            RetentionMessagesListCommand.self, RetentionMessagesUploadCommand.self, RetentionMessagesDeleteCommand.self,
        ])
}

/// A message's text, from flags or from a JSON file in Apple's `UploadMessageRequestBody` shape.
struct RetentionMessageOptions: ParsableArguments {
    @Option(help: "The message's header (at most 66 characters).") var header: String?
    @Option(help: "The message's body (at most 144 characters).") var body: String?
    @Option(help: "The identifier (UUID) of an uploaded image to show with it.") var image: String?
    @Option(name: .customLong("alt-text"), help: "What the image shows, read aloud by VoiceOver.") var altText: String?
    @Option(
        help: "A JSON file (or - for standard input) in Apple's UploadMessageRequestBody shape, instead of the flags.")
    var file: String?

    /// Whether any part of a message was given.
    var given: Bool { header != nil || body != nil || image != nil || altText != nil || file != nil }

    /// The message the flags or the file describe.
    func message() throws(ServerError) -> UploadMessageRequestBody {
        if let file {
            guard header == nil, body == nil, image == nil, altText == nil else {
                throw ServerError(.invalidRequest, "give either --file or --header and --body, not both")
            }
            let data: Data
            do { data = try InputFile.read(file) } catch { throw ServerError(.invalidRequest, error.description) }
            do { return try JSONDecoder().decode(UploadMessageRequestBody.self, from: data) } catch {
                throw ServerError(
                    .invalidRequest, "\(file) is not an UploadMessageRequestBody (header, body, image…): \(error)")
            }
        }
        guard let header, let body else {
            throw ServerError(.invalidRequest, "a message needs --header and --body, or --file")
        }
        return try RetentionOperations.message(header: header, body: body, imageIdentifier: image, altText: altText)
    }
}

/// `--id`: the identifier an upload is made under.
struct RetentionIdentifierOption: ParsableArguments {
    @Option(help: "The identifier (a UUID you choose); a new one by default.") var id: String?

    /// The identifier given, or `nil` for a new one.
    func identifier() throws(ServerError) -> UUID? {
        guard let id else { return nil }
        return try RetentionOperations.uuid(id, "--id")
    }
}

/// `kakin retention messages list`
struct RetentionMessagesListCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the uploaded messages with their review state, oldest first.")
    @OptionGroup var connection: RetentionConnectionOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let list = try await operations.client.messageList(environment: operations.environment)
        let lines = (list.messageIdentifiers ?? []).map {
            "\($0.messageIdentifier ?? "?")  \($0.messageState?.rawValue ?? "?")"
        }
        return connection.output(list, text: lines.isEmpty ? "no messages" : lines.joined(separator: "\n"))
    }
}

/// `kakin retention messages upload (--header H --body B [--image ID --alt-text T] | --file F) [--id UUID]`
struct RetentionMessagesUploadCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a message; prints its identifier (the --id given, or a new UUID).",
        discussion: "Apple reviews each message before it can be shown; `messages list` says where the review stands.")
    @OptionGroup var connection: RetentionConnectionOptions
    @OptionGroup var message: RetentionMessageOptions
    @OptionGroup var id: RetentionIdentifierOption

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let body = try message.message()
        let uploaded = try await operations.uploadMessage(body, identifier: try id.identifier())
        return CommandOutput(standardOutput: "uploaded message \(uploaded.appleText)")
    }
}

/// `kakin retention messages delete ID`
struct RetentionMessagesDeleteCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a message.")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "The message's identifier.") var id: String

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let identifier = try RetentionOperations.uuid(id, "the message identifier")
        try await operations.client.deleteMessage(identifier, environment: operations.environment)
        return CommandOutput(standardOutput: "deleted message \(identifier.appleText)")
    }
}

/// `kakin retention images list|upload|delete`
struct RetentionImagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "images", abstract: "List, upload and delete the images messages show.",
        subcommands: [
            RetentionImagesListCommand.self, RetentionImagesUploadCommand.self, RetentionImagesDeleteCommand.self,
        ])
}

/// `kakin retention images list`
struct RetentionImagesListCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the uploaded images with their review state and size, oldest first.")
    @OptionGroup var connection: RetentionConnectionOptions

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let list = try await operations.client.imageList(environment: operations.environment)
        let lines = (list.imageIdentifiers ?? []).map {
            "\($0.imageIdentifier ?? "?")  \($0.imageState?.rawValue ?? "?")  \($0.imageSize?.rawValue ?? "-")"
        }
        return connection.output(list, text: lines.isEmpty ? "no images" : lines.joined(separator: "\n"))
    }
}

/// `kakin retention images upload FILE [--size FULL_SIZE|BULLET_POINT] [--id UUID]`
struct RetentionImagesUploadCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "upload", abstract: "Upload a PNG image; prints its identifier (the --id given, or a new UUID).")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "The PNG file (or - for standard input).") var file: String
    @Option(help: "FULL_SIZE (a message's image) or BULLET_POINT (a bullet point's icon); Apple's default when absent.")
    var size: String?
    @OptionGroup var id: RetentionIdentifierOption

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let png: Data
        do { png = try InputFile.read(file) } catch { throw ServerError(.invalidRequest, error.description) }
        let uploaded = try await operations.uploadImage(
            png, size: size.map { RetentionImageSize(rawValue: $0.uppercased()) }, identifier: try id.identifier())
        return CommandOutput(standardOutput: "uploaded image \(uploaded.appleText)")
    }
}

/// `kakin retention images delete ID`
struct RetentionImagesDeleteCommand: RetentionAPICommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an image (Apple refuses while a message shows it).")
    @OptionGroup var connection: RetentionConnectionOptions
    @Argument(help: "The image's identifier.") var id: String

    func perform(_ operations: RetentionOperations) async throws(ServerError) -> CommandOutput {
        let identifier = try RetentionOperations.uuid(id, "the image identifier")
        try await operations.client.deleteImage(identifier, environment: operations.environment)
        return CommandOutput(standardOutput: "deleted image \(identifier.appleText)")
    }
}
