// `photofs render`: renders one local image file as a mount with --size would show it (to preview a size or
// quality setting, or to look into an image a mount refuses).
import ArgumentParser
import FolderImport
import Foundation
import PhotoContent

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render one JPEG, PNG or HEIC file as `photofs mount --size` would show it.",
        discussion: """
            Example:
              photofs render IMG_0001.jpg --size square:256 --output thumb.png
            """
    )

    @Argument(help: "A JPEG, PNG or HEIC file.")
    var input: String

    @Option(help: "N (long edge at most N px) or square:N.")
    var size: String

    @Option(help: "Where to write the result.")
    var output: String

    @Option(help: "JPEG quality (1–100) of resized JPEG variants.")
    var jpegQuality = 85

    @Option(help: "Largest image, in megapixels, that is rendered.")
    var maxPixels = RenderOptions.defaultMaxPixels / 1_000_000

    func run() throws {
        let (spec, options) = try MountCommand.parseSize(size, jpegQuality: jpegQuality, maxPixels: maxPixels)
        guard let spec else { throw CommandFailure("--size original renders nothing: give N or square:N") }
        guard let data = FileManager.default.contents(atPath: input) else { throw CommandFailure("cannot read \(input)") }
        // The kind its bytes say, as a folder import decides it (a sized mount renders HEIC too).
        guard let type = ImageFileKind.fromBytes(Array(data.prefix(64)))?.contentType else {
            throw CommandFailure("\(input) is not a JPEG, PNG or HEIC file")
        }
        let started = DispatchTime.now()
        let rendered = try VariantRenderer.render(data, contentType: type, spec: spec, options: options)
        let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6
        guard FileManager.default.createFile(atPath: output, contents: rendered.data) else {
            throw CommandFailure("cannot write \(output)")
        }
        // What a sized mount budgets for this render (`VariantProducer.renderMemoryBudget`).
        let estimate = VariantRenderer.estimatedPeakBytes(prefix: data, sourceBytes: data.count, contentType: type, spec: spec,
                                                          maxPixels: options.maxPixels)
        print("\(rendered.width)×\(rendered.height) \(rendered.contentType), \(rendered.data.count) bytes"
              + (rendered.isUnchanged ? " (the input, unchanged)" : "") + String(format: ", %.1f ms", milliseconds)
              + (estimate.map { String(format: ", estimated peak memory %.1f MB", Double($0) / 1e6) } ?? ""))
    }
}
