use std::process::ExitCode;

use clap::Parser;
use kafka_config_operator::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        #[cfg(feature = "operator")]
        Command::Run(options) => run_controller(options),
        Command::Render {
            paths,
            format,
            hash_key,
            workload: true,
        } => cli::render_workload(&paths, format, &hash_key),
        Command::Render {
            paths,
            format,
            hash_key,
            workload: false,
        } => cli::render(&paths, format, &hash_key),
        Command::Explain {
            paths,
            namespace,
            name,
            key,
            format,
        } => {
            if paths.is_empty() {
                explain_live(namespace, name, key, format)
            } else {
                cli::explain_files(&paths, name.as_deref(), key.as_deref(), format)
            }
        }
        Command::Validate {
            paths,
            format,
            hash_key,
            strict,
            missing_sources,
        } => cli::validate(&paths, format, &hash_key, strict, missing_sources),
        #[cfg(feature = "operator")]
        Command::History {
            namespace,
            global,
            name,
            format,
        } => run_async(cli::history_live(namespace, name, global, format)),
        #[cfg(feature = "operator")]
        Command::Crds { format } => cli::crds(format),
    };
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(cli::Invalid)) => ExitCode::from(1),
        Err(error) => {
            // An error can quote a manifest (a YAML error, a path): its lines are printed with
            // what would drive the terminal escaped.
            for line in format!("error: {error}").lines() {
                eprintln!(
                    "{}",
                    kafka_config_operator::engine::safe_text::printable(line)
                );
            }
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "operator")]
fn explain_live(
    namespace: Option<String>,
    name: Option<String>,
    key: Option<String>,
    format: cli::TextFormat,
) -> Result<Result<(), cli::Invalid>, cli::CliError> {
    match (namespace, name) {
        (Some(namespace), Some(name)) => run_async(cli::explain_live(namespace, name, key, format)),
        _ => Err(cli::CliError::Usage(
            "explain needs -f PATH…, or -n NAMESPACE NAME for a live config".into(),
        )),
    }
}

/// A build without the `operator` feature (the engine and the offline CLI) cannot reach a cluster.
#[cfg(not(feature = "operator"))]
fn explain_live(
    _namespace: Option<String>,
    _name: Option<String>,
    _key: Option<String>,
    _format: cli::TextFormat,
) -> Result<Result<(), cli::Invalid>, cli::CliError> {
    Err(cli::CliError::Usage(
        "explain needs -f PATH… (this binary was built without the `operator` feature, so it \
         cannot read a live config)"
            .into(),
    ))
}

#[cfg(feature = "operator")]
fn run_async<F>(future: F) -> Result<Result<(), cli::Invalid>, cli::CliError>
where
    F: std::future::Future<Output = Result<Result<(), cli::Invalid>, cli::CliError>>,
{
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => Err(cli::CliError::Io(e)),
    }
}

#[cfg(feature = "operator")]
fn run_controller(
    options: kafka_config_operator::operator::RunOptions,
) -> Result<Result<(), cli::Invalid>, cli::CliError> {
    run_async(async move {
        kafka_config_operator::operator::run(options).await?;
        Ok(Ok(()))
    })
}
