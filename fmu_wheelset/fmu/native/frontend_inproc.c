/* The in-process front end (fmi2_frontend.c, unchanged) under internal names
 * wheelset_inproc_fmi2*: the exported fmi2* functions are in out_of_process.c,
 * which runs an instance either here (the default) or in a worker process
 * (WHEELSET_FMU_OUT_OF_PROCESS=1). */
#include "fmi2Functions.h"

#undef fmi2GetTypesPlatform
#define fmi2GetTypesPlatform wheelset_inproc_fmi2GetTypesPlatform
#undef fmi2GetVersion
#define fmi2GetVersion wheelset_inproc_fmi2GetVersion
#undef fmi2SetDebugLogging
#define fmi2SetDebugLogging wheelset_inproc_fmi2SetDebugLogging
#undef fmi2Instantiate
#define fmi2Instantiate wheelset_inproc_fmi2Instantiate
#undef fmi2FreeInstance
#define fmi2FreeInstance wheelset_inproc_fmi2FreeInstance
#undef fmi2SetupExperiment
#define fmi2SetupExperiment wheelset_inproc_fmi2SetupExperiment
#undef fmi2EnterInitializationMode
#define fmi2EnterInitializationMode wheelset_inproc_fmi2EnterInitializationMode
#undef fmi2ExitInitializationMode
#define fmi2ExitInitializationMode wheelset_inproc_fmi2ExitInitializationMode
#undef fmi2Terminate
#define fmi2Terminate wheelset_inproc_fmi2Terminate
#undef fmi2Reset
#define fmi2Reset wheelset_inproc_fmi2Reset
#undef fmi2GetReal
#define fmi2GetReal wheelset_inproc_fmi2GetReal
#undef fmi2GetInteger
#define fmi2GetInteger wheelset_inproc_fmi2GetInteger
#undef fmi2GetBoolean
#define fmi2GetBoolean wheelset_inproc_fmi2GetBoolean
#undef fmi2GetString
#define fmi2GetString wheelset_inproc_fmi2GetString
#undef fmi2SetReal
#define fmi2SetReal wheelset_inproc_fmi2SetReal
#undef fmi2SetInteger
#define fmi2SetInteger wheelset_inproc_fmi2SetInteger
#undef fmi2SetBoolean
#define fmi2SetBoolean wheelset_inproc_fmi2SetBoolean
#undef fmi2SetString
#define fmi2SetString wheelset_inproc_fmi2SetString
#undef fmi2GetFMUstate
#define fmi2GetFMUstate wheelset_inproc_fmi2GetFMUstate
#undef fmi2SetFMUstate
#define fmi2SetFMUstate wheelset_inproc_fmi2SetFMUstate
#undef fmi2FreeFMUstate
#define fmi2FreeFMUstate wheelset_inproc_fmi2FreeFMUstate
#undef fmi2SerializedFMUstateSize
#define fmi2SerializedFMUstateSize wheelset_inproc_fmi2SerializedFMUstateSize
#undef fmi2SerializeFMUstate
#define fmi2SerializeFMUstate wheelset_inproc_fmi2SerializeFMUstate
#undef fmi2DeSerializeFMUstate
#define fmi2DeSerializeFMUstate wheelset_inproc_fmi2DeSerializeFMUstate
#undef fmi2GetDirectionalDerivative
#define fmi2GetDirectionalDerivative wheelset_inproc_fmi2GetDirectionalDerivative
#undef fmi2SetRealInputDerivatives
#define fmi2SetRealInputDerivatives wheelset_inproc_fmi2SetRealInputDerivatives
#undef fmi2GetRealOutputDerivatives
#define fmi2GetRealOutputDerivatives wheelset_inproc_fmi2GetRealOutputDerivatives
#undef fmi2DoStep
#define fmi2DoStep wheelset_inproc_fmi2DoStep
#undef fmi2CancelStep
#define fmi2CancelStep wheelset_inproc_fmi2CancelStep
#undef fmi2GetStatus
#define fmi2GetStatus wheelset_inproc_fmi2GetStatus
#undef fmi2GetRealStatus
#define fmi2GetRealStatus wheelset_inproc_fmi2GetRealStatus
#undef fmi2GetIntegerStatus
#define fmi2GetIntegerStatus wheelset_inproc_fmi2GetIntegerStatus
#undef fmi2GetBooleanStatus
#define fmi2GetBooleanStatus wheelset_inproc_fmi2GetBooleanStatus
#undef fmi2GetStringStatus
#define fmi2GetStringStatus wheelset_inproc_fmi2GetStringStatus

#include "fmi2_frontend.c"

#include "out_of_process.h"

/* what the worker process needs: the resource folder and the recorded Python */
int wheelset_resources_and_python(const char *uri, char *resources, size_t resources_size,
                                  python_location *where, char *err, size_t err_size) {
    Config cfg;
    if (resource_directory(uri, resources, resources_size, err, err_size) != 0) return -1;
    if (read_config(resources, &cfg, err, err_size) != 0) return -1;
    *where = cfg.python;
    return 0;
}
