// Parses every Java file given (a directory is walked) with the JDK's own compiler front end, without resolving
// imports: the generated Java binding's dependencies (the jsii runtime, cdk8s's Java packages) come from a
// registry CI cannot reach, so this is the check of its syntax. Run as `java .ci/JavaParse.java DIR`.
import com.sun.source.util.JavacTask;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavaParse {
  public static void main(String[] args) throws IOException {
    var compiler = ToolProvider.getSystemJavaCompiler();
    var diagnostics = new DiagnosticCollector<JavaFileObject>();
    StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, null);
    List<Path> sources;
    try (Stream<Path> walk = Stream.of(args).map(Path::of).flatMap(JavaParse::walk)) {
      sources = walk.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
    }
    if (sources.isEmpty()) {
      System.err.println("JavaParse: no .java files under " + String.join(" ", args));
      System.exit(1);
    }
    var task = (JavacTask) compiler.getTask(null, files, diagnostics, List.of("-proc:none"), null,
        files.getJavaFileObjectsFromPaths(sources));
    task.parse();
    long errors = diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).peek(System.err::println).count();
    System.out.println("JavaParse: " + sources.size() + " files parsed, " + errors + " errors");
    System.exit(errors == 0 ? 0 : 1);
  }

  private static Stream<Path> walk(Path p) {
    try {
      return Files.walk(p);
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }
}
