# Devices: provision before the benchmarks of a device, tear down after the last one. On a cluster
# each is a Slurm job on the device's node, and the benchmarks of a round form group jobs between
# them (profiles/slurm: groups; each job leaves its node clean: hooks.smk release_devices_at_exit).


rule provision_device:
    output:
        "results/{study}/devices/{device}/provisioned.json",
    log:
        "logs/{study}/devices/{device}/provision.log",
    conda:
        "../envs/devices.yaml"
    resources:
        **MEASURING_RESOURCES,
    params:
        spec=get_device_spec,
        state=get_state_path,
    shell:
        "python -m benchcast.devices --log {log} ensure --id {wildcards.device} "
        "--spec {params.spec:q} --state {params.state:q} --describe {output}"


rule teardown_device:
    input:
        provisioned="results/{study}/devices/{device}/provisioned.json",
        benchmarks=get_device_benchmarks,
    output:
        "results/{study}/devices/{device}/torn_down.json",
    log:
        "logs/{study}/devices/{device}/teardown.log",
    conda:
        "../envs/devices.yaml"
    resources:
        **MEASURING_RESOURCES,
    params:
        state=get_state_path,
    shell:
        "python -m benchcast.devices --log {log} teardown {params.state:q} --copy-to {output}"


rule teardown:
    log:
        "logs/teardown.log",
    conda:
        "../envs/devices.yaml"
    # Clean up what an earlier, killed run left: every device a state record still lists.
    # Run it as `snakemake teardown`; it is never part of `all`.
    # MariaDB servers first: a server a killed job left holds its device's mount.
    params:
        studies=lambda wc: [f"results/{s}" for s in STUDIES],
    shell:
        "for d in {params.studies:q}; do "
        "if [ -d $d ]; then python -m benchcast.mariadb teardown-all $d; fi; "
        "if [ -d $d/devices/state ]; then python -m benchcast.devices teardown-all $d/devices/state; fi; "
        "done > {log} 2>&1; cat {log}"
